#pragma once
// A parsed inline-PTX statement: the instructions the simulator runs, decoded once so that running
// one is a switch over already-known types and operands. Private to libcuset_sim.
#include <cstdint>
#include <string>
#include <vector>

#include "cuset_sim/ptx.hpp"
#include "cuset_sim/runtime.hpp"

#pragma GCC visibility push(hidden)
namespace cuset_sim::ptx {

enum class Type : unsigned char { none, b8, b16, b32, b64, u8, u16, u32, u64, s8, s16, s32, s64, f16, f16x2, bf16, bf16x2, f32, f64, tf32, pred };
// Inline: the interpreter asks on every operand it reads.
constexpr int bitsOf(Type t) {
  switch (t) {
    case Type::b8:
    case Type::u8:
    case Type::s8:
      return 8;
    case Type::b16:
    case Type::u16:
    case Type::s16:
    case Type::f16:
    case Type::bf16:
      return 16;
    case Type::b32:
    case Type::u32:
    case Type::s32:
    case Type::f32:
    case Type::f16x2:
    case Type::bf16x2:
    case Type::tf32:
      return 32;
    case Type::b64:
    case Type::u64:
    case Type::s64:
    case Type::f64:
      return 64;
    case Type::pred:
      return 1;
    case Type::none:
      return 0;
  }
  return 0;
}
constexpr bool isSigned(Type t) { return t == Type::s8 || t == Type::s16 || t == Type::s32 || t == Type::s64; }
constexpr bool isFloat(Type t) { return t == Type::f16 || t == Type::bf16 || t == Type::f32 || t == Type::f64 || t == Type::tf32; }

enum class Special : unsigned char {
  laneid,
  warpid,
  nwarpid,
  tid_x,
  tid_y,
  tid_z,
  ntid_x,
  ntid_y,
  ntid_z,
  ctaid_x,
  ctaid_y,
  ctaid_z,
  nctaid_x,
  nctaid_y,
  nctaid_z,
  smid,
  nsmid,
  gridid,
  clock,
  clock_hi,
  clock64,
  globaltimer,
  globaltimer_lo,
  globaltimer_hi,
  lanemask_eq,
  lanemask_le,
  lanemask_lt,
  lanemask_ge,
  lanemask_gt,
};

struct Operand {
  enum class Kind : unsigned char { reg, imm, special, vector, address };
  Kind kind = Kind::reg;
  int reg = -1;               // reg; address base register (-1: an absolute address)
  std::uint64_t imm = 0;      // imm (bits); address offset
  bool floatLiteral = false;  // imm written as a decimal floating-point number: `imm` holds a double
  Special special{};
  std::vector<int> elements;  // vector: registers, -1 for the sink `_`
  int pair = -1;              // `d|p`: the predicate register written beside d
};

enum class Op : unsigned char {
  mov,
  cvt,
  cvta,
  ld,
  st,
  shfl,
  bar,
  bar_warp,
  cp_async,
  cp_commit,
  cp_wait_group,
  cp_wait_all,
  ldmatrix,
  mma,
  add,
  sub,
  mul,
  mad,
  fma,
  min,
  max,
  and_,
  or_,
  xor_,
  not_,
  shl,
  shr,
  neg,
  setp,
  selp,
  fence,
  activemask,
  trap,
  prmt,
  lop3,
  bfe,
  bfi,
  popc,
  clz,
  brev,
  abs,
  atom,
  red,
  stmatrix,
  div,
  rem,
  ex2,
  lg2,
  sqrt,
  rsqrt,
  rcp,
  redux,  // redux.sync: a warp-wide reduction of u32/s32 values
  bra,    // to `target`
  exit,   // ret/exit: the thread's program ends
};

enum class Space : unsigned char { generic, global, shared };
enum class Rounding : unsigned char { none, rn, rz, rm, rp, rna, rni, rzi, rmi, rpi };
// equ..geu: true where either operand is NaN, else as eq..ge; num: neither is NaN; nan: either is.
enum class Cmp : unsigned char { eq, ne, lt, le, gt, ge, lo, ls, hi, hs, equ, neu, ltu, leu, gtu, geu, num, nan };
enum class ShflMode : unsigned char { up, down, bfly, idx };
enum class MulMode : unsigned char { lo, hi, wide };
enum class AtomicOp : unsigned char { add, min, max, exch, cas, and_, or_, xor_, inc, dec };

struct Instr {
  Op op{};
  std::string text;  // as written, for errors
  int guard = -1;    // predicate register guarding it
  bool guardNegated = false;
  Type type = Type::none;   // the instruction's type; cvt: destination; mma: D
  Type type2 = Type::none;  // cvt: source; mma: A and B
  Type type3 = Type::none;  // mma: C
  Space space = Space::generic;
  bool toSpace = false;  // cvta.to.<space>
  int vec = 1;           // ld/st: .v2/.v4; ldmatrix: .x1/.x2/.x4
  bool trans = false;    // ldmatrix .trans
  bool sat = false;
  bool cacheAll = false;   // cp.async.ca (4, 8 or 16 bytes) rather than .cg (16 only)
  bool ignoreSrc = false;  // cp.async's fourth operand is a predicate (ignore-src), not a source size
  int k = 0;               // mma: K of m16n8k<K>
  Rounding rounding = Rounding::none;
  Cmp cmp{};
  ShflMode shfl{};
  MulMode mul = MulMode::lo;
  AtomicOp atomic = AtomicOp::add;  // atom/red
  std::size_t target = 0;           // bra: the index of the instruction after its label
  std::vector<Operand> operands;
};

// Programs declaring more registers than this get their register file from the runtime, not from the
// caller's stack array: a whole kernel's body (Triton's PTX) declares thousands.
constexpr int kCallerRegisters = 256;

struct Program {
  std::vector<Instr> code;
  int operands = 0;
  int registers = 0;
  bool collectives = false;
  int line = -1;  // of the asm statement in candidate.cu
};

// Parses `text`; on failure returns nullopt-like (program.code empty) with `check` saying why.
PtxCheck parse(std::string_view text, int operands, bool extended, Program& program);

// What a lane hands to a warp-wide PTX collective: everything the others may need from it.
struct LaneSlot {
  const ThreadContext* ctx;
  const Instr* instr;
  std::uint64_t* file;                // its registers; the collective writes the results into them
  std::uint64_t address;              // ldmatrix: this lane's row address (as written, not yet translated)
  std::uint32_t a = 0, b = 0, c = 0;  // shfl.sync operands
};
// Runs a warp-wide instruction once every lane in `group` has posted its slot (slots[lane]); returns
// an error message, or "" on success.
std::string warpCompute(WarpOp op, LaneSlot* const slots[32], unsigned group);

}  // namespace cuset_sim::ptx
#pragma GCC visibility pop
