// Running parsed inline PTX for one CUDA thread, and the warp-wide instructions (shfl.sync, ldmatrix,
// mma.sync) once the whole warp has arrived. Semantics follow the PTX ISA; the fragment layouts of
// ldmatrix and mma.sync are its tables, written out below.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "block_runner.hpp"
#include "ptx_program.hpp"

extern "C" void cuset_sim_shared_access(std::uintptr_t address, std::size_t size, int write, const void* pc);  // shared_accesses.cpp

namespace cuset_sim::ptx {

namespace {

using detail::format;
using detail::SimTrap;

// 128-bit products for mul.hi/.wide of 64-bit operands (a GCC extension, hence __extension__).
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

constexpr std::uint64_t maskOf(int bits) { return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1; }

float f32(std::uint64_t b) {
  float f;
  const auto u = static_cast<std::uint32_t>(b);
  std::memcpy(&f, &u, 4);
  return f;
}
double f64(std::uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}
std::uint64_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
std::uint64_t bits(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
float halfToFloat(std::uint16_t h) {
  __half_raw r;
  r.x = h;
  return __half2float(__half(r));
}
float bf16ToFloat(std::uint16_t h) {
  __nv_bfloat16_raw r;
  r.x = h;
  return __bfloat162float(__nv_bfloat16(r));
}
std::uint16_t rawHalf(__half h) { return static_cast<__half_raw>(h).x; }
std::uint16_t rawBf16(__nv_bfloat16 h) { return static_cast<__nv_bfloat16_raw>(h).x; }

// Sign- or zero-extends the low bits of `b` as type t.
std::int64_t signedValue(std::uint64_t b, Type t) {
  const int w = bitsOf(t);
  if (w >= 64) return static_cast<std::int64_t>(b);
  const std::uint64_t v = b & maskOf(w);
  return (v >> (w - 1)) & 1 ? static_cast<std::int64_t>(v | ~maskOf(w)) : static_cast<std::int64_t>(v);
}

double toDouble(std::uint64_t b, Type t) {
  switch (t) {
    case Type::f16:
      return halfToFloat(static_cast<std::uint16_t>(b));
    case Type::bf16:
      return bf16ToFloat(static_cast<std::uint16_t>(b));
    case Type::f32:
    case Type::tf32:
      return f32(b);
    case Type::f64:
      return f64(b);
    default:
      return isSigned(t) ? static_cast<double>(signedValue(b, t)) : static_cast<double>(b & maskOf(bitsOf(t)));
  }
}

float roundToFloat(double v, Rounding r) {
  float f = static_cast<float>(v);  // nearest, ties to even
  if (std::isnan(v) || std::isinf(v) || static_cast<double>(f) == v) return f;
  if ((r == Rounding::rz && std::fabs(static_cast<double>(f)) > std::fabs(v)) || (r == Rounding::rm && static_cast<double>(f) > v)) {
    f = std::nextafter(f, r == Rounding::rz ? 0.0f : -std::numeric_limits<float>::infinity());
  } else if (r == Rounding::rp && static_cast<double>(f) < v) {
    f = std::nextafter(f, std::numeric_limits<float>::infinity());
  }
  return f;
}

double roundToIntegral(double v, Rounding r) {
  switch (r) {
    case Rounding::rzi:
      return std::trunc(v);
    case Rounding::rmi:
      return std::floor(v);
    case Rounding::rpi:
      return std::ceil(v);
    case Rounding::rni:
      return std::nearbyint(v);
    default:
      return v;
  }
}

std::uint64_t fromDouble(double v, Type t, Rounding r) {
  switch (t) {
    case Type::f64:
      return bits(v);
    case Type::f32:
      return bits(roundToFloat(v, r));
    case Type::tf32: {
      // cvt.rna.tf32.f32: nearest, ties away from zero, at 10 mantissa bits.
      auto u = static_cast<std::uint32_t>(bits(static_cast<float>(v)));
      if (std::isfinite(v)) u = (u + 0x1000u) & 0xffffe000u;
      return u;
    }
    case Type::f16: {
      const float f = static_cast<float>(v);
      switch (r) {
        case Rounding::rz:
          return rawHalf(__float2half_rz(f));
        case Rounding::rm:
          return rawHalf(__float2half_rd(f));
        case Rounding::rp:
          return rawHalf(__float2half_ru(f));
        default:
          return rawHalf(__float2half_rn(f));
      }
    }
    case Type::bf16: {
      const float f = static_cast<float>(v);
      switch (r) {
        case Rounding::rz:
          return rawBf16(__float2bfloat16_rz(f));
        case Rounding::rm:
          return rawBf16(__float2bfloat16_rd(f));
        case Rounding::rp:
          return rawBf16(__float2bfloat16_ru(f));
        default:
          return rawBf16(__float2bfloat16_rn(f));
      }
    }
    default: {
      // Float to integer: PTX saturates to the destination's range and gives 0 for NaN.
      if (std::isnan(v)) return 0;
      const double x = roundToIntegral(v, r == Rounding::none ? Rounding::rzi : r);
      const int w = bitsOf(t);
      if (isSigned(t)) {
        const double lo = -std::ldexp(1.0, w - 1), hi = std::ldexp(1.0, w - 1);
        const std::int64_t s = x <= lo   ? static_cast<std::int64_t>(lo)
                               : x >= hi ? static_cast<std::int64_t>(maskOf(w - 1))
                                         : static_cast<std::int64_t>(x);
        return static_cast<std::uint64_t>(s);
      }
      const double hi = std::ldexp(1.0, w);
      return x <= 0 ? 0 : x >= hi ? maskOf(w) : static_cast<std::uint64_t>(x);
    }
  }
}

std::uint64_t convert(std::uint64_t a, const Instr& in) {
  const Type d = in.type, s = in.type2;
  if (isFloat(d)) {
    double v = toDouble(a, s);
    const bool integral =
        in.rounding == Rounding::rni || in.rounding == Rounding::rzi || in.rounding == Rounding::rmi || in.rounding == Rounding::rpi;
    if (integral) v = roundToIntegral(v, in.rounding);
    if (in.sat && !std::isnan(v)) v = std::fmin(1.0, std::fmax(0.0, v));
    return fromDouble(v, d, integral ? Rounding::rn : in.rounding);
  }
  if (isFloat(s)) return fromDouble(toDouble(a, s), d, in.rounding);
  // Integer to integer: truncation (or sign extension), or clamping with .sat.
  const int w = bitsOf(d);
  const Int128 v = isSigned(s) ? Int128{signedValue(a, s)} : Int128{a & maskOf(bitsOf(s))};
  if (in.sat) {
    const Int128 lo = isSigned(d) ? -(Int128{1} << (w - 1)) : 0;
    const Int128 hi = isSigned(d) ? (Int128{1} << (w - 1)) - 1 : (Int128{1} << w) - 1;
    return static_cast<std::uint64_t>(v < lo ? lo : v > hi ? hi : v);
  }
  const std::uint64_t low = static_cast<std::uint64_t>(v) & maskOf(w);
  return isSigned(d) ? static_cast<std::uint64_t>(signedValue(low, d)) : low;
}

std::uint64_t nanoseconds() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// Read-modify-write of a 4- or 8-byte word, atomic across host threads (blocks run concurrently).
template <class F>
std::uint64_t atomicUpdate(void* p, std::size_t bytes, F next) {
  if (bytes == 4) {
    auto* w = static_cast<std::uint32_t*>(p);
    std::uint32_t old = __atomic_load_n(w, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(w, &old, static_cast<std::uint32_t>(next(old)), false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
    return old;
  }
  auto* w = static_cast<std::uint64_t*>(p);
  std::uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(w, &old, next(old), false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
  }
  return old;
}

std::uint64_t atomicResult(const Instr& in, std::uint64_t old, std::uint64_t b, std::uint64_t c) {
  const Type t = in.type;
  const std::uint64_t mask = maskOf(bitsOf(t));
  old &= mask;
  if (t == Type::f32) {
    const float x = f32(old), y = f32(b);
    switch (in.atomic) {
      case AtomicOp::add:
        return bits(x + y);
      case AtomicOp::min:
        return bits(std::fmin(x, y));
      case AtomicOp::max:
        return bits(std::fmax(x, y));
      case AtomicOp::exch:
        return b & mask;
      default:
        return old;  // the parser allows nothing else on floats
    }
  }
  if (t == Type::f64) {
    const double x = f64(old), y = f64(b);
    switch (in.atomic) {
      case AtomicOp::add:
        return bits(x + y);
      case AtomicOp::min:
        return bits(std::fmin(x, y));
      case AtomicOp::max:
        return bits(std::fmax(x, y));
      case AtomicOp::exch:
        return b;
      default:
        return old;
    }
  }
  const std::int64_t so = signedValue(old, t), sb = signedValue(b, t);
  switch (in.atomic) {
    case AtomicOp::add:
      return (old + b) & mask;
    case AtomicOp::min:
      return isSigned(t) ? static_cast<std::uint64_t>(std::min(so, sb)) & mask : std::min(old, b & mask);
    case AtomicOp::max:
      return isSigned(t) ? static_cast<std::uint64_t>(std::max(so, sb)) & mask : std::max(old, b & mask);
    case AtomicOp::exch:
      return b & mask;
    case AtomicOp::cas:
      return old == (b & mask) ? c & mask : old;
    case AtomicOp::and_:
      return old & b;
    case AtomicOp::or_:
      return (old | b) & mask;
    case AtomicOp::xor_:
      return (old ^ b) & mask;
    case AtomicOp::inc:
      return old >= (b & mask) ? 0 : old + 1;
    case AtomicOp::dec:
      return (old == 0 || old > (b & mask)) ? b & mask : old - 1;
  }
  return old;
}

class Thread {
 public:
  Thread(const Program& p, std::uint64_t* file) : p_(p), file_(file), ctx_(*tls_thread) {}

  void run() {
    for (std::size_t pc = 0; pc < p_.code.size();) {
      const Instr& in = p_.code[pc++];
      if (in.guard >= 0 && ((file_[in.guard] != 0) == in.guardNegated)) continue;
      if (in.op == Op::bra) {
        pc = in.target;
      } else if (in.op == Op::exit) {
        return;
      } else {
        step(in);
      }
    }
  }

 private:
  [[noreturn]] void fail(const Instr& in, const std::string& why) const {
    throw SimTrap{format("inline PTX `%s`: %s (line %d)", in.text.c_str(), why.c_str(), p_.line)};
  }

  std::uint64_t special(Special s) const {
    const BlockInfo& b = *ctx_.block;
    const unsigned threads = b.blockDim.x * b.blockDim.y * b.blockDim.z;
    const std::uint32_t lane = ctx_.lane;
    switch (s) {
      case Special::laneid:
        return lane;
      case Special::warpid:
        return ctx_.linear / 32;
      case Special::nwarpid:
        return (threads + 31) / 32;
      case Special::tid_x:
        return ctx_.threadIdx.x;
      case Special::tid_y:
        return ctx_.threadIdx.y;
      case Special::tid_z:
        return ctx_.threadIdx.z;
      case Special::ntid_x:
        return b.blockDim.x;
      case Special::ntid_y:
        return b.blockDim.y;
      case Special::ntid_z:
        return b.blockDim.z;
      case Special::ctaid_x:
        return b.blockIdx.x;
      case Special::ctaid_y:
        return b.blockIdx.y;
      case Special::ctaid_z:
        return b.blockIdx.z;
      case Special::nctaid_x:
        return b.gridDim.x;
      case Special::nctaid_y:
        return b.gridDim.y;
      case Special::nctaid_z:
        return b.gridDim.z;
      case Special::smid:
        return 0;
      case Special::nsmid:
        return 132;  // an H100/H200's SM count
      case Special::gridid:
        return 0;
      case Special::clock:
        return static_cast<std::uint32_t>(__builtin_ia32_rdtsc());
      case Special::clock_hi:
        return static_cast<std::uint32_t>(__builtin_ia32_rdtsc() >> 32);
      case Special::clock64:
        return __builtin_ia32_rdtsc();
      case Special::globaltimer:
        return nanoseconds();
      case Special::globaltimer_lo:
        return static_cast<std::uint32_t>(nanoseconds());
      case Special::globaltimer_hi:
        return static_cast<std::uint32_t>(nanoseconds() >> 32);
      case Special::lanemask_eq:
        return 1u << lane;
      case Special::lanemask_le:
        return static_cast<std::uint32_t>(maskOf(static_cast<int>(lane) + 1));
      case Special::lanemask_lt:
        return static_cast<std::uint32_t>(maskOf(static_cast<int>(lane)));
      case Special::lanemask_ge:
        return ~static_cast<std::uint32_t>(maskOf(static_cast<int>(lane)));
      case Special::lanemask_gt:
        return ~static_cast<std::uint32_t>(maskOf(static_cast<int>(lane) + 1));
    }
    return 0;
  }

  std::uint64_t read(const Operand& o, Type t) const {
    const int w = t == Type::pred ? 64 : bitsOf(t);
    switch (o.kind) {
      case Operand::Kind::reg:
        return file_[o.reg] & maskOf(w);
      case Operand::Kind::imm:
        if (o.floatLiteral) {
          if (t == Type::f32) return bits(static_cast<float>(f64(o.imm)));
          if (t == Type::f64) return o.imm;
          return static_cast<std::uint64_t>(static_cast<std::int64_t>(f64(o.imm))) & maskOf(w);
        }
        return o.imm & maskOf(w);
      case Operand::Kind::special:
        return special(o.special) & maskOf(w);
      case Operand::Kind::vector: {
        const int each = w / static_cast<int>(o.elements.size());
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < o.elements.size(); ++i) {
          if (o.elements[i] >= 0) v |= (file_[o.elements[i]] & maskOf(each)) << (i * static_cast<std::size_t>(each));
        }
        return v;
      }
      case Operand::Kind::address:
        break;
    }
    return 0;
  }

  void write(const Instr& in, const Operand& o, std::uint64_t v, Type t) {
    if (o.kind == Operand::Kind::vector) {
      const int each = bitsOf(t) / static_cast<int>(o.elements.size());
      for (std::size_t i = 0; i < o.elements.size(); ++i) {
        if (o.elements[i] >= 0) file_[o.elements[i]] = (v >> (i * static_cast<std::size_t>(each))) & maskOf(each);
      }
      return;
    }
    if (o.kind != Operand::Kind::reg) fail(in, "the destination must be a register");
    file_[o.reg] = t == Type::pred ? (v != 0) : v;
  }

  void* address(const Operand& o, Space space) const {
    const std::uint64_t a = (o.reg >= 0 ? file_[o.reg] : 0) + o.imm;
    if (space == Space::shared) return shared_pointer(a, p_.line);
    return reinterpret_cast<void*>(a);
  }

  void memory(const Instr& in) {
    const bool load = in.op == Op::ld;
    const Operand& data = in.operands[load ? 0 : 1];
    auto* p = static_cast<char*>(address(in.operands[load ? 1 : 0], in.space));
    const std::size_t bytes = static_cast<std::size_t>(bitsOf(in.type) / 8), total = bytes * static_cast<std::size_t>(in.vec);
    if (reinterpret_cast<std::uintptr_t>(p) % total != 0)
      fail(in, format("misaligned address %p for a %zu-byte access", static_cast<void*>(p), total));
    if (load && in.space != Space::shared) detail::check_tail_read(p, total);
    // As the host build's instrumentation hands C++ loads and stores over: the race checks (between the
    // threads of a block, and between blocks in global memory) see the PTX's accesses too. A store that
    // leaves the bytes as they are is not handed over: Triton's reductions have every lane that holds a
    // replicated value store it to the same shared address, which a GPU resolves to that same value.
    std::uint64_t stored[4] = {};
    for (int i = 0; !load && i < in.vec; ++i) {
      const int reg = data.kind == Operand::Kind::vector ? data.elements[static_cast<std::size_t>(i)] : data.reg;
      stored[i] = data.kind == Operand::Kind::vector ? (reg >= 0 ? file_[reg] : 0) : read(data, in.type);
    }
    bool unchanged = !load;
    for (int i = 0; unchanged && i < in.vec; ++i) unchanged = std::memcmp(p + static_cast<std::size_t>(i) * bytes, &stored[i], bytes) == 0;
    if (!unchanged) cuset_sim_shared_access(reinterpret_cast<std::uintptr_t>(p), total, load ? 0 : 1, &in);
    for (int i = 0; i < in.vec; ++i) {
      const int reg = data.kind == Operand::Kind::vector ? data.elements[static_cast<std::size_t>(i)] : data.reg;
      if (load) {
        std::uint64_t v = 0;
        std::memcpy(&v, p + static_cast<std::size_t>(i) * bytes, bytes);
        if (reg >= 0) file_[reg] = isSigned(in.type) ? static_cast<std::uint64_t>(signedValue(v, in.type)) : v;
      } else {
        std::memcpy(p + static_cast<std::size_t>(i) * bytes, &stored[i], bytes);
      }
    }
  }

  std::uint64_t arithmetic(const Instr& in) const {
    const Type t = in.type;
    const int w = bitsOf(t);
    const std::uint64_t a = read(in.operands[1], t);
    const std::uint64_t b = in.operands.size() > 2 ? read(in.operands[2], in.op == Op::shl || in.op == Op::shr ? Type::u32 : t) : 0;
    const std::uint64_t c =
        in.operands.size() > 3 ? read(in.operands[3], (in.op == Op::mad && in.mul == MulMode::wide) ? (isSigned(t) ? Type::s64 : Type::u64) : t) : 0;
    if (t == Type::f32 || t == Type::f64) {
      const bool single = t == Type::f32;
      const double x = single ? f32(a) : f64(a), y = single ? f32(b) : f64(b), z = single ? f32(c) : f64(c);
      auto out = [&](double r) { return single ? bits(static_cast<float>(r)) : bits(r); };
      switch (in.op) {
        case Op::add:
          return single ? bits(f32(a) + f32(b)) : bits(x + y);
        case Op::sub:
          return single ? bits(f32(a) - f32(b)) : bits(x - y);
        case Op::mul:
          return single ? bits(f32(a) * f32(b)) : bits(x * y);
        case Op::fma:
          return single ? bits(std::fmaf(f32(a), f32(b), f32(c))) : bits(std::fma(x, y, z));
        case Op::min:
          return out(std::fmin(x, y));
        case Op::max:
          return out(std::fmax(x, y));
        case Op::neg:
          return single ? bits(-f32(a)) : bits(-x);
        case Op::div:
          return single ? bits(f32(a) / f32(b)) : bits(x / y);
        case Op::ex2:
          return single ? bits(std::exp2f(f32(a))) : bits(std::exp2(x));
        case Op::lg2:
          return single ? bits(std::log2f(f32(a))) : bits(std::log2(x));
        case Op::sqrt:
          return single ? bits(std::sqrt(f32(a))) : bits(std::sqrt(x));
        case Op::rsqrt:
          return single ? bits(1.0f / std::sqrt(f32(a))) : bits(1.0 / std::sqrt(x));
        case Op::rcp:
          return single ? bits(1.0f / f32(a)) : bits(1.0 / x);
        default:
          fail(in, "not defined for floating-point types");
      }
    }
    const std::int64_t sa = signedValue(a, t), sb = signedValue(b, t);
    switch (in.op) {
      case Op::add:
        return (a + b) & maskOf(w);
      case Op::sub:
        return (a - b) & maskOf(w);
      case Op::and_:
        return a & b;
      case Op::or_:
        return a | b;
      case Op::xor_:
        return a ^ b;
      case Op::not_:
        return ~a & maskOf(w);
      case Op::neg:
        return (~a + 1) & maskOf(w);
      case Op::min:
        return isSigned(t) ? static_cast<std::uint64_t>(std::min(sa, sb)) & maskOf(w) : std::min(a, b);
      case Op::max:
        return isSigned(t) ? static_cast<std::uint64_t>(std::max(sa, sb)) & maskOf(w) : std::max(a, b);
      case Op::shl:
        return b >= static_cast<std::uint64_t>(w) ? 0 : (a << b) & maskOf(w);
      case Op::shr:
        if (isSigned(t)) return static_cast<std::uint64_t>(sa >> std::min<std::uint64_t>(b, static_cast<std::uint64_t>(w - 1))) & maskOf(w);
        return b >= static_cast<std::uint64_t>(w) ? 0 : a >> b;
      case Op::div:
      case Op::rem: {
        // A GPU returns an unspecified value; here, as a division by zero in the kernel's C++ would, it
        // stops the kernel (the host would trap). The one overflow, MIN / -1, wraps as the GPU's does.
        if (b == 0) fail(in, "integer division by zero");
        if (!isSigned(t)) return (in.op == Op::div ? a / b : a % b) & maskOf(w);
        if (sb == -1) return in.op == Op::div ? (~a + 1) & maskOf(w) : 0;
        return static_cast<std::uint64_t>(in.op == Op::div ? sa / sb : sa % sb) & maskOf(w);
      }
      case Op::mul:
      case Op::mad: {
        const Int128 p = isSigned(t) ? Int128{sa} * sb : static_cast<Int128>(static_cast<UInt128>(a) * b);
        std::uint64_t r;
        if (in.mul == MulMode::lo)
          r = static_cast<std::uint64_t>(p) & maskOf(w);
        else if (in.mul == MulMode::hi)
          r = static_cast<std::uint64_t>(p >> w) & maskOf(w);
        else
          r = static_cast<std::uint64_t>(p) & maskOf(2 * w);
        if (in.op == Op::mad) r = (r + c) & maskOf(in.mul == MulMode::wide ? 2 * w : w);
        return r;
      }
      default:
        break;
    }
    fail(in, "unexpected operation");
  }

  bool compare(const Instr& in) const {
    const Type t = in.type;
    const std::uint64_t a = read(in.operands[1], t), b = read(in.operands[2], t);
    if (isFloat(t)) {
      const double x = toDouble(a, t), y = toDouble(b, t);
      const bool unordered = std::isnan(x) || std::isnan(y);
      if (in.cmp == Cmp::num || in.cmp == Cmp::nan) return unordered == (in.cmp == Cmp::nan);
      if (in.cmp >= Cmp::equ && unordered) return true;
      if (unordered) return false;  // the ordered comparisons
      switch (in.cmp) {             // neither is NaN here: the unordered forms compare as the ordered ones
        case Cmp::eq:
        case Cmp::equ:
          return x == y;
        case Cmp::ne:
        case Cmp::neu:
          return x != y;
        case Cmp::lt:
        case Cmp::lo:
        case Cmp::ltu:
          return x < y;
        case Cmp::le:
        case Cmp::ls:
        case Cmp::leu:
          return x <= y;
        case Cmp::gt:
        case Cmp::hi:
        case Cmp::gtu:
          return x > y;
        case Cmp::ge:
        case Cmp::hs:
        case Cmp::geu:
          return x >= y;
        case Cmp::num:
        case Cmp::nan:
          break;
      }
    }
    const bool sign = isSigned(t) && in.cmp != Cmp::lo && in.cmp != Cmp::ls && in.cmp != Cmp::hi && in.cmp != Cmp::hs;
    const std::int64_t sa = signedValue(a, t), sb = signedValue(b, t);
    switch (in.cmp) {
      case Cmp::eq:
        return a == b;
      case Cmp::ne:
        return a != b;
      case Cmp::lt:
      case Cmp::lo:
        return sign ? sa < sb : a < b;
      case Cmp::le:
      case Cmp::ls:
        return sign ? sa <= sb : a <= b;
      case Cmp::gt:
      case Cmp::hi:
        return sign ? sa > sb : a > b;
      case Cmp::ge:
      case Cmp::hs:
        return sign ? sa >= sb : a >= b;
      default:
        return false;  // the unordered comparisons are of floats only (the parser's check)
    }
  }

  void collective(const Instr& in, WarpOp op, unsigned mask, LaneSlot& slot) {
    slot.ctx = &ctx_;
    slot.instr = &in;
    slot.file = file_;
    warp_collective(op, mask, reinterpret_cast<std::uint64_t>(&slot), 0, 32, p_.line);
  }

  void step(const Instr& in) {
    const auto& ops = in.operands;
    switch (in.op) {
      case Op::mov:
        write(in, ops[0], read(ops[1], in.type), in.type);
        break;
      case Op::cvt:
        convertType(in);
        break;
      case Op::cvta:
        convertAddress(in);
        break;
      case Op::ld:
      case Op::st:
        memory(in);
        break;
      case Op::redux: {
        LaneSlot slot{};
        slot.a = static_cast<std::uint32_t>(read(ops[1], Type::b32));
        collective(in, WarpOp::ptx_shfl, static_cast<unsigned>(read(ops[2], Type::b32)), slot);
        break;
      }
      case Op::shfl: {
        LaneSlot slot{};
        slot.a = static_cast<std::uint32_t>(read(ops[1], Type::b32));
        slot.b = static_cast<std::uint32_t>(read(ops[2], Type::b32));
        slot.c = static_cast<std::uint32_t>(read(ops[3], Type::b32));
        collective(in, WarpOp::ptx_shfl, static_cast<unsigned>(read(ops[4], Type::b32)), slot);
        break;
      }
      case Op::bar:
        block_barrier(BlockOp::sync, 0, p_.line);
        break;
      case Op::bar_warp:
        warp_collective(WarpOp::sync, static_cast<unsigned>(read(ops[0], Type::b32)), 0, 0, 32, p_.line);
        break;
      case Op::cp_async:
        copyAsync(in);
        break;
      case Op::cp_commit:
        async_commit();
        break;
      case Op::cp_wait_group:
        async_wait(read(ops[0], Type::u32));
        break;
      case Op::cp_wait_all:
        async_commit();
        async_wait(0);
        break;
      case Op::ldmatrix:
      case Op::stmatrix: {
        const Operand& at = ops[in.op == Op::stmatrix ? 0 : 1];
        LaneSlot slot{};
        slot.address = (at.reg >= 0 ? file_[at.reg] : 0) + at.imm;
        collective(in, WarpOp::ptx_ldmatrix, 0xffffffffu, slot);
        break;
      }
      case Op::mma: {
        LaneSlot slot{};
        collective(in, WarpOp::ptx_mma, 0xffffffffu, slot);
        break;
      }
      case Op::setp:
        write(in, ops[0], compare(in), Type::pred);
        break;
      case Op::selp:
        write(in, ops[0], read(ops[3], Type::pred) ? read(ops[1], in.type) : read(ops[2], in.type), in.type);
        break;
      case Op::fence:
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        break;
      case Op::activemask:
        write(in, ops[0], active_mask(), in.type);
        break;
      case Op::trap:
        fail(in, "trap");
        break;
      case Op::bra:
      case Op::exit:
        break;  // run() moves the program counter
      case Op::atom:
      case Op::red:
        atomic(in);
        break;
      case Op::prmt:
      case Op::lop3:
      case Op::bfe:
      case Op::bfi:
      case Op::popc:
      case Op::clz:
      case Op::brev:
      case Op::abs:
        bitwise(in);
        break;
      default: {
        const Type t = in.op == Op::mul && in.mul == MulMode::wide     ? (isSigned(in.type) ? Type::s64 : Type::u64)
                       : (in.op == Op::mad && in.mul == MulMode::wide) ? (isSigned(in.type) ? Type::s64 : Type::u64)
                                                                       : in.type;
        write(in, ops[0], arithmetic(in), t);
      }
    }
  }

  // cvt: one value to another type (with rounding), or two f32 packed into an f16x2/bf16x2.
  void convertType(const Instr& in) {
    const auto& ops = in.operands;
    if (in.type == Type::f16x2 || in.type == Type::bf16x2) {
      const Type half = in.type == Type::f16x2 ? Type::f16 : Type::bf16;
      const double hi = f32(read(ops[1], Type::f32)), lo = f32(read(ops[2], Type::f32));
      write(in, ops[0], (fromDouble(hi, half, in.rounding) << 16) | fromDouble(lo, half, in.rounding), Type::b32);
    } else {
      write(in, ops[0], convert(read(ops[1], in.type2), in), in.type);
    }
  }

  // cvta: a generic address to or from the shared window (global addresses are the same in both).
  void convertAddress(const Instr& in) {
    const auto& ops = in.operands;
    const std::uint64_t a = read(ops[1], in.type);
    std::uint64_t r = a;
    if (in.space == Space::shared) {
      r = in.toSpace ? shared_address(reinterpret_cast<const void*>(a)) : reinterpret_cast<std::uint64_t>(shared_pointer(a, p_.line));
    }
    write(in, ops[0], r & maskOf(bitsOf(in.type)), in.type);
  }

  // cp.async: `size` bytes from global to shared memory, the bytes past the source size zeroed.
  void copyAsync(const Instr& in) {
    const auto& ops = in.operands;
    const std::size_t size = read(ops[2], Type::u32);
    if (!in.cacheAll && size != 16) fail(in, "cp.async.cg copies 16 bytes");
    std::size_t source = size;
    if (ops.size() == 4) source = in.ignoreSrc ? (read(ops[3], Type::pred) ? 0 : size) : read(ops[3], Type::u32);
    if (source > size) fail(in, "a source size larger than the copy");
    const void* src = source == 0 ? nullptr : address(ops[1], Space::global);
    async_copy(address(ops[0], Space::shared), src ? src : address(ops[0], Space::shared), size, size - source, p_.line);
  }

  // atom (returns the old value) and red: one read-modify-write of 4 or 8 aligned bytes.
  void atomic(const Instr& in) {
    const auto& ops = in.operands;
    const bool fetch = in.op == Op::atom;
    void* p = address(ops[fetch ? 1 : 0], in.space);
    const std::size_t bytes = static_cast<std::size_t>(bitsOf(in.type) / 8);
    if (reinterpret_cast<std::uintptr_t>(p) % bytes != 0) fail(in, format("misaligned address %p for a %zu-byte atomic", p, bytes));
    const std::uint64_t b = read(ops[fetch ? 2 : 1], in.type), c = ops.size() > 3 ? read(ops[3], in.type) : 0;
    const std::uint64_t old = atomicUpdate(p, bytes, [&](std::uint64_t o) { return atomicResult(in, o, b, c); });
    if (fetch) write(in, ops[0], isSigned(in.type) ? static_cast<std::uint64_t>(signedValue(old, in.type)) : old, in.type);
  }

  // The bit-level ops: permute, three-input logic, field extract and insert, counts and reversal, abs.
  void bitwise(const Instr& in) {
    const auto& ops = in.operands;
    switch (in.op) {
      case Op::prmt: {
        // Bytes 0-3 of a then 4-7 of b; each selector nibble picks one (bit 3: replicate its sign bit).
        const std::uint64_t bytes = read(ops[1], Type::b32) | (read(ops[2], Type::b32) << 32);
        const auto selector = static_cast<std::uint32_t>(read(ops[3], Type::b32));
        std::uint32_t r = 0;
        for (int i = 0; i < 4; ++i) {
          const std::uint32_t nibble = (selector >> (4 * i)) & 0xf;
          std::uint32_t byte = static_cast<std::uint32_t>(bytes >> (8 * (nibble & 7))) & 0xff;
          if (nibble & 8) byte = (byte & 0x80) ? 0xff : 0;
          r |= byte << (8 * i);
        }
        write(in, ops[0], r, Type::b32);
        break;
      }
      case Op::lop3: {
        // Bit i of the result is bit (a_i b_i c_i) of the lookup table.
        const std::uint32_t a = static_cast<std::uint32_t>(read(ops[1], Type::b32)), b = static_cast<std::uint32_t>(read(ops[2], Type::b32)),
                            c = static_cast<std::uint32_t>(read(ops[3], Type::b32)), lut = static_cast<std::uint32_t>(read(ops[4], Type::b32));
        std::uint32_t r = 0;
        for (int idx = 0; idx < 8; ++idx) {
          if ((lut >> idx) & 1) r |= ((idx & 4) ? a : ~a) & ((idx & 2) ? b : ~b) & ((idx & 1) ? c : ~c);
        }
        write(in, ops[0], r, Type::b32);
        break;
      }
      case Op::bfe: {
        const int w = bitsOf(in.type);
        const std::uint64_t a = read(ops[1], in.type);
        const unsigned pos = static_cast<unsigned>(read(ops[2], Type::u32) & 0xff), len = static_cast<unsigned>(read(ops[3], Type::u32) & 0xff);
        const unsigned msb = static_cast<unsigned>(w - 1);
        const std::uint64_t sign = (isSigned(in.type) && len > 0) ? (a >> std::min(pos + len - 1, msb)) & 1 : 0;
        std::uint64_t r = 0;
        for (unsigned i = 0; i < static_cast<unsigned>(w); ++i) r |= ((i < len && pos + i <= msb) ? (a >> (pos + i)) & 1 : sign) << i;
        write(in, ops[0], r, in.type);
        break;
      }
      case Op::bfi: {
        const int w = bitsOf(in.type);
        const std::uint64_t f = read(ops[1], in.type);
        std::uint64_t r = read(ops[2], in.type);
        const unsigned pos = static_cast<unsigned>(read(ops[3], Type::u32) & 0xff), len = static_cast<unsigned>(read(ops[4], Type::u32) & 0xff);
        for (unsigned i = 0; i < len && pos + i < static_cast<unsigned>(w); ++i)
          r = (r & ~(std::uint64_t{1} << (pos + i))) | (((f >> i) & 1) << (pos + i));
        write(in, ops[0], r, in.type);
        break;
      }
      case Op::popc:
      case Op::clz:
      case Op::brev: {
        const int w = bitsOf(in.type);
        const std::uint64_t a = read(ops[1], in.type);
        std::uint64_t r = 0;
        if (in.op == Op::popc)
          r = static_cast<std::uint64_t>(__builtin_popcountll(a));
        else if (in.op == Op::clz)
          r = a == 0 ? static_cast<std::uint64_t>(w) : static_cast<std::uint64_t>(__builtin_clzll(a) - (64 - w));
        else
          for (int i = 0; i < w; ++i) r |= ((a >> i) & 1) << (w - 1 - i);
        write(in, ops[0], r, in.op == Op::brev ? in.type : Type::u32);
        break;
      }
      case Op::abs: {
        const std::uint64_t a = read(ops[1], in.type);
        std::uint64_t r;
        if (in.type == Type::f32)
          r = bits(std::fabs(f32(a)));
        else if (in.type == Type::f64)
          r = bits(std::fabs(f64(a)));
        else {
          const std::int64_t v = signedValue(a, in.type);  // the most negative value stays itself, as on a GPU
          r = (v < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v)) & maskOf(bitsOf(in.type));
        }
        write(in, ops[0], r, in.type);
        break;
      }
      default:
        break;
    }
  }

  const Program& p_;
  std::uint64_t* file_;
  const ThreadContext& ctx_;
};

// The running lane's context while computing for another lane (shared addresses are per block).
class AsLane {
 public:
  explicit AsLane(const ThreadContext* c) : saved_(tls_thread) { tls_thread = const_cast<ThreadContext*>(c); }
  ~AsLane() { tls_thread = saved_; }
  AsLane(const AsLane&) = delete;
  AsLane& operator=(const AsLane&) = delete;

 private:
  ThreadContext* saved_;
};

// redux.sync over the lanes of `group`, every one of them given the result: the lanes' values folded
// in lane order with the same integer operations atom/red apply.
std::string reduce(LaneSlot* const slots[32], unsigned group) {
  const int first = __builtin_ctz(group);
  const Instr& in = *slots[first]->instr;
  std::uint64_t r = slots[first]->a;
  for (int lane = first + 1; lane < 32; ++lane) {
    if (group & (1u << lane)) r = atomicResult(in, r, slots[lane]->a, 0);
  }
  for (int lane = 0; lane < 32; ++lane) {
    if (group & (1u << lane)) slots[lane]->file[slots[lane]->instr->operands[0].reg] = r;
  }
  return {};
}

std::string shuffle(LaneSlot* const slots[32], unsigned group) {
  std::uint32_t result[32] = {};
  bool valid[32] = {};
  for (int lane = 0; lane < 32; ++lane) {
    if (!(group & (1u << lane))) continue;
    const LaneSlot& s = *slots[lane];
    // The PTX ISA's shfl.sync: c packs the clamp value (bits 0-4) and the segment mask (bits 8-12).
    const std::uint32_t b = s.b & 0x1f, clamp = s.c & 0x1f, segmask = (s.c >> 8) & 0x1f;
    const std::uint32_t maxLane = (static_cast<std::uint32_t>(lane) & segmask) | (clamp & ~segmask);
    const std::uint32_t minLane = static_cast<std::uint32_t>(lane) & segmask;
    std::int64_t j = lane;
    bool p = false;
    switch (s.instr->shfl) {
      case ShflMode::up:
        j = lane - static_cast<std::int64_t>(b);
        p = j >= static_cast<std::int64_t>(maxLane);
        break;
      case ShflMode::down:
        j = lane + static_cast<std::int64_t>(b);
        p = j <= static_cast<std::int64_t>(maxLane);
        break;
      case ShflMode::bfly:
        j = lane ^ static_cast<std::int64_t>(b);
        p = j <= static_cast<std::int64_t>(maxLane);
        break;
      case ShflMode::idx:
        j = static_cast<std::int64_t>(minLane | (b & ~segmask));
        p = j <= static_cast<std::int64_t>(maxLane);
        break;
    }
    if (!p) j = lane;
    // A source lane outside the group leaves the value undefined; the simulator gives the lane its own.
    result[lane] = (group & (1u << j)) ? slots[j]->a : s.a;
    valid[lane] = p;
  }
  for (int lane = 0; lane < 32; ++lane) {
    if (!(group & (1u << lane))) continue;
    const Operand& d = slots[lane]->instr->operands[0];
    slots[lane]->file[d.reg] = result[lane];
    if (d.pair >= 0) slots[lane]->file[d.pair] = valid[lane];
  }
  return {};
}

// ldmatrix/stmatrix.m8n8.b16: each matrix is 8 rows of 16 bytes whose addresses lanes 8i..8i+7 give;
// lane l holds of matrix i the two elements at row l/4, columns 2(l%4) and 2(l%4)+1 (with .trans,
// row and column swapped: rows 2(l%4) and 2(l%4)+1 of column l/4). ldmatrix reads them into the
// lane's registers, stmatrix writes the lane's registers there.
std::string moveMatrix(LaneSlot* const slots[32]) {
  const Instr& in = *slots[0]->instr;
  const bool store = in.op == Op::stmatrix;
  const char* name = store ? "stmatrix" : "ldmatrix";
  char* rows[32] = {};
  for (int r = 0; r < 8 * in.vec; ++r) {
    const LaneSlot& s = *slots[r];
    void* p;
    if (in.space == Space::shared) {
      AsLane as(s.ctx);
      try {
        p = shared_pointer(s.address, -1);
      } catch (const SimTrap& t) {
        return format("%s: lane %d's row address: %s", name, r, t.message.c_str());
      }
    } else {
      p = reinterpret_cast<void*>(s.address);
    }
    if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return format("%s: lane %d's row address %p is not 16-byte aligned", name, r, p);
    rows[r] = static_cast<char*>(p);
  }
  for (int lane = 0; lane < 32; ++lane) {
    const LaneSlot& s = *slots[lane];
    const Operand& regs = s.instr->operands[store ? 1 : 0];
    for (int i = 0; i < in.vec; ++i) {
      char* const* m = rows + 8 * i;
      char* lo = in.trans ? m[2 * (lane % 4)] + 2 * (lane / 4) : m[lane / 4] + 4 * (lane % 4);
      char* hi = in.trans ? m[2 * (lane % 4) + 1] + 2 * (lane / 4) : m[lane / 4] + 4 * (lane % 4) + 2;
      const int reg = regs.kind == Operand::Kind::vector ? regs.elements[static_cast<std::size_t>(i)] : regs.reg;
      if (store) {
        const auto v = static_cast<std::uint32_t>(reg >= 0 ? s.file[reg] : 0);
        const auto l = static_cast<std::uint16_t>(v & 0xffff), h = static_cast<std::uint16_t>(v >> 16);
        std::memcpy(lo, &l, 2);
        std::memcpy(hi, &h, 2);
      } else {
        std::uint16_t l, h;
        std::memcpy(&l, lo, 2);
        std::memcpy(&h, hi, 2);
        if (reg >= 0) s.file[reg] = static_cast<std::uint64_t>(l) | (static_cast<std::uint64_t>(h) << 16);
      }
    }
  }
  return {};
}

// mma.sync.aligned.m16n8k{16,8}.row.col: the PTX ISA's fragment layouts, with g = lane / 4 (the
// group) and t = lane % 4 (the thread in the group). Element i of a fragment register list sits in
// register i / 2, low half first for 16-bit elements.
//   A (m16n8k16, 8 elements): row g + 8 * ((i / 2) % 2), column 2t + i % 2 + 8 * (i / 4)
//   A (m16n8k8, 4 elements):  row g + 8 * (i / 2),       column 2t + i % 2
//   B (k16, 4 elements):      row 2t + i % 2 + 8 * (i / 2), column g
//   B (k8, 2 elements):       row 2t + i,                   column g
//   C and D (4 elements):     row g + 8 * (i / 2),       column 2t + i % 2
// Each D element is C plus the K products in ascending k, one fused multiply-add in float per term;
// an f16 D is rounded once at the end.
std::string matrixMultiply(LaneSlot* const slots[32]) {
  const Instr& in = *slots[0]->instr;
  const int K = in.k;
  float A[16][16] = {}, B[16][8] = {}, C[16][8] = {};
  auto element16 = [&](const LaneSlot& s, const Operand& o, int i, Type t) {
    const int reg = o.elements[static_cast<std::size_t>(i / 2)];
    const auto v = static_cast<std::uint32_t>(reg >= 0 ? s.file[reg] : 0);
    const auto h = static_cast<std::uint16_t>(i % 2 ? v >> 16 : v & 0xffff);
    return t == Type::bf16 ? bf16ToFloat(h) : halfToFloat(h);
  };
  for (int lane = 0; lane < 32; ++lane) {
    const LaneSlot& s = *slots[lane];
    const auto& ops = s.instr->operands;
    const int g = lane / 4, t = lane % 4;
    if (in.type2 == Type::tf32) {
      // One element per register, its low 13 bits ignored as the tensor cores ignore them (Triton hands
      // them raw float32; cvt.rna.tf32.f32 first would have rounded instead). Products of two tf32 values
      // are exact in float32.
      auto tf32 = [&](const Operand& o, int i) {
        const int reg = o.elements[static_cast<std::size_t>(i)];
        return f32((reg >= 0 ? s.file[reg] : 0) & 0xffffe000u);
      };
      for (int i = 0; i < 4; ++i) A[g + 8 * (i % 2)][t + 4 * (i / 2)] = tf32(ops[1], i);
      for (int i = 0; i < 2; ++i) B[t + 4 * i][g] = tf32(ops[2], i);
    } else if (K == 16) {
      for (int i = 0; i < 8; ++i) A[g + 8 * ((i / 2) % 2)][2 * t + i % 2 + 8 * (i / 4)] = element16(s, ops[1], i, in.type2);
      for (int i = 0; i < 4; ++i) B[2 * t + i % 2 + 8 * (i / 2)][g] = element16(s, ops[2], i, in.type2);
    } else {
      for (int i = 0; i < 4; ++i) A[g + 8 * (i / 2)][2 * t + i % 2] = element16(s, ops[1], i, in.type2);
      for (int i = 0; i < 2; ++i) B[2 * t + i][g] = element16(s, ops[2], i, in.type2);
    }
    for (int i = 0; i < 4; ++i) {
      float& c = C[g + 8 * (i / 2)][2 * t + i % 2];
      if (in.type3 == Type::f32) {
        const int reg = ops[3].elements[static_cast<std::size_t>(i)];
        c = f32(reg >= 0 ? s.file[reg] : 0);
      } else {
        c = element16(s, ops[3], i, Type::f16);
      }
    }
  }
  float D[16][8];
  for (int r = 0; r < 16; ++r) {
    for (int c = 0; c < 8; ++c) {
      float acc = C[r][c];
      for (int k = 0; k < K; ++k) acc = std::fmaf(A[r][k], B[k][c], acc);
      D[r][c] = acc;
    }
  }
  for (int lane = 0; lane < 32; ++lane) {
    const LaneSlot& s = *slots[lane];
    const Operand& d = s.instr->operands[0];
    const int g = lane / 4, t = lane % 4;
    if (in.type == Type::f32) {
      for (int i = 0; i < 4; ++i) {
        const int reg = d.elements[static_cast<std::size_t>(i)];
        if (reg >= 0) s.file[reg] = bits(D[g + 8 * (i / 2)][2 * t + i % 2]);
      }
    } else {
      for (int r = 0; r < 2; ++r) {
        const int reg = d.elements[static_cast<std::size_t>(r)];
        const std::uint64_t lo = rawHalf(__float2half_rn(D[g + 8 * r][2 * t])), hi = rawHalf(__float2half_rn(D[g + 8 * r][2 * t + 1]));
        if (reg >= 0) s.file[reg] = lo | (hi << 16);
      }
    }
  }
  return {};
}

// Parsed statements, for the life of the process; each host thread keeps its own index of them.
struct ProgramKey {
  const char* text;
  int operands, line;
  bool operator==(const ProgramKey&) const = default;
};
struct ProgramKeyHash {
  std::size_t operator()(const ProgramKey& k) const {
    return std::hash<const void*>()(k.text) ^ (static_cast<std::size_t>(k.line) << 8) ^ static_cast<std::size_t>(k.operands);
  }
};
std::mutex programsMutex;
std::deque<Program> programs;

const Program& programFor(const char* text, int operands, int extended, int line) {
  thread_local std::unordered_map<ProgramKey, const Program*, ProgramKeyHash> index;
  const ProgramKey key{text, operands, line};
  if (auto it = index.find(key); it != index.end()) return *it->second;
  Program parsed;
  const PtxCheck check = parse(text, operands, extended != 0, parsed);
  if (check.kind != PtxCheck::Kind::simulated) trap(check.message.c_str(), line);
  parsed.line = line;
  std::lock_guard lock(programsMutex);
  const Program& kept = programs.emplace_back(std::move(parsed));
  index.emplace(key, &kept);
  return kept;
}

}  // namespace

std::string warpCompute(WarpOp op, LaneSlot* const slots[32], unsigned group) {
  int leader = 0;
  while (leader < 32 && !(group & (1u << leader))) ++leader;
  if (leader == 32) return {};
  const Instr* instr = slots[leader]->instr;
  for (int lane = 0; lane < 32; ++lane) {
    if ((group & (1u << lane)) && slots[lane]->instr != instr) {
      return format("divergent inline PTX: lane %d is at `%s` while lane %d is at `%s`", lane, slots[lane]->instr->text.c_str(), leader,
                    instr->text.c_str());
    }
  }
  if (op == WarpOp::ptx_shfl) return instr->op == Op::redux ? reduce(slots, group) : shuffle(slots, group);
  if (group != 0xffffffffu) {
    return format("`%s` reached by only part of the warp (lanes 0x%08x): .aligned instructions need all 32 lanes", instr->text.c_str(), group);
  }
  return op == WarpOp::ptx_ldmatrix ? moveMatrix(slots) : matrixMultiply(slots);
}

}  // namespace cuset_sim::ptx

namespace cuset_sim {

void ptx_run(const char* text, int operands, int extended, int line, std::uint64_t* registers) {
  const ptx::Program& program = ptx::programFor(text, operands, extended, line);
  if (program.registers <= ptx::kCallerRegisters) {
    ptx::Thread(program, registers).run();
    return;
  }
  // The caller holds only the operands (ptx_check says so): a register file of the program's size here,
  // from a pool of this host thread's that is never given back while the thread lives. Several fibers
  // of one host thread are inside ptx_run at once (a barrier switches them), each holding its own file.
  // Not malloc and free per run: glibc trimming a thread's heap reads /proc/sys/vm/overcommit_memory,
  // a file the sandbox forbids, and the run would end as a sandbox violation.
  struct File {
    std::unique_ptr<std::uint64_t[]> slots;
    std::size_t size = 0;
  };
  thread_local std::vector<File> spare;
  const auto size = static_cast<std::size_t>(program.registers);
  File file = spare.empty() ? File{} : std::move(spare.back());
  if (!spare.empty()) spare.pop_back();
  if (file.size < size) file = File{std::make_unique<std::uint64_t[]>(size), size};
  std::fill_n(file.slots.get(), size, 0);
  std::copy(registers, registers + operands, file.slots.get());
  struct GiveBack {
    File& file;
    ~GiveBack() { spare.push_back(std::move(file)); }
  } giveBack{file};
  ptx::Thread(program, file.slots.get()).run();
  std::copy(file.slots.get(), file.slots.get() + operands, registers);
}

}  // namespace cuset_sim
