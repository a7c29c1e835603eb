#pragma once
// Included before every candidate the simulator compiles with the host C++ compiler. It turns CUDA C++
// device code into host C++: qualifiers become nothing (or thread_local for __shared__), built-in
// variables read the running CUDA thread's context, and intrinsics, atomics, warp collectives and
// math functions get host implementations with CUDA's semantics.
// cuda_runtime.h first, as host code, before the built-in variables become macros: a candidate's own
// `#include <cuda_runtime.h>` (or device_launch_parameters.h) would otherwise declare `threadIdx`
// after it is a macro. Its include guards make the candidate's include a no-op.
#define CUSET_SIM_KERNEL_LIBRARY 1  // runtime.hpp and ptx.hpp leave out the launching side's API
// libstdc++'s C++17 special math functions (std::cyl_bessel_j, std::riemann_zeta, ...) are left out:
// device code cannot call them on a GPU, and <cmath> declaring them makes every host build instantiate
// their float and long double templates, 60 ms of a 160 ms build (bench_sim host_build). The guard is
// that header's own; <limits>, which it brought in, is included below.
#define _GLIBCXX_BITS_SPECFUN_H 1
#include <cuda_runtime.h>
#include <device_launch_parameters.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <vector_functions.h>
#include <vector_types.h>

#include <algorithm>
#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "cuset_sim/ptx.hpp"
#include "cuset_sim/runtime.hpp"

// ---- loads near a buffer's tail (tail_reads.cpp) ----
// A build whose layout has buffer tails instruments every load (sim_compiler.cpp); GCC calls these
// for each. Tails end where a page does (the buffer ends against its fence), so a load whose last
// byte is not in a page's last 16 bytes cannot touch one: defined here, hidden, the common case is a
// direct call of a few instructions instead of a call through the PLT into libcuset_sim (an
// elementwise kernel: 14.9 instead of 24.9 ms, bench_sim).
// A build instrumented for shared-memory accesses (-DCUSET_SIM_SHARED_ACCESSES, stores instrumented
// too) also hands every load and store to the runtime (shared_accesses.cpp: race checks, lockstep).
#ifdef __SANITIZE_ADDRESS__
extern "C" void cuset_sim_tail_read(std::uintptr_t address, std::size_t size);
#ifdef CUSET_SIM_SHARED_ACCESSES
// `pc`: the access's return address in the kernel's code, which the race report turns into a line.
extern "C" void cuset_sim_shared_access(std::uintptr_t address, std::size_t size, int write, const void* pc);
#define CUSET_SIM_SHARED_ACCESS(address, size, write) cuset_sim_shared_access(address, size, write, __builtin_return_address(0))
#define CUSET_SIM_STORE_CHECK(n)                                                                            \
  extern "C" __attribute__((visibility("hidden"))) void __asan_store##n##_noabort(std::uintptr_t address) { \
    cuset_sim_shared_access(address, n, 1, __builtin_return_address(0));                                    \
  }
CUSET_SIM_STORE_CHECK(1)
CUSET_SIM_STORE_CHECK(2)
CUSET_SIM_STORE_CHECK(4)
CUSET_SIM_STORE_CHECK(8)
CUSET_SIM_STORE_CHECK(16)
#undef CUSET_SIM_STORE_CHECK
extern "C" __attribute__((visibility("hidden"))) void __asan_storeN_noabort(std::uintptr_t address, std::size_t size) {
  cuset_sim_shared_access(address, size, 1, __builtin_return_address(0));
}
#else
#define CUSET_SIM_SHARED_ACCESS(address, size, write) ((void)0)
#endif
// Called before a call that does not return (a trap's throw); there is no shadow memory to clean.
extern "C" __attribute__((visibility("hidden"))) void __asan_handle_no_return() {}
#define CUSET_SIM_LOAD_CHECK(n)                                                                            \
  extern "C" __attribute__((visibility("hidden"))) void __asan_load##n##_noabort(std::uintptr_t address) { \
    if (((address + (n - 1)) & 4095u) >= 4080u) cuset_sim_tail_read(address, n);                           \
    CUSET_SIM_SHARED_ACCESS(address, n, 0);                                                                \
  }
CUSET_SIM_LOAD_CHECK(1)
CUSET_SIM_LOAD_CHECK(2)
CUSET_SIM_LOAD_CHECK(4)
CUSET_SIM_LOAD_CHECK(8)
CUSET_SIM_LOAD_CHECK(16)
#undef CUSET_SIM_LOAD_CHECK
extern "C" __attribute__((visibility("hidden"))) void __asan_loadN_noabort(std::uintptr_t address, std::size_t size) {
  if (size != 0 && ((address + size - 1) & 4095u) >= 4080u) cuset_sim_tail_read(address, size);
  CUSET_SIM_SHARED_ACCESS(address, size, 0);
}
#endif
// Atomics are not accesses a race check counts (two threads' atomicAdd on one counter is no race).
#define CUSET_SIM_UNCHECKED __attribute__((no_sanitize_address))
namespace cuset_sim {
// `p`, through a value the compiler cannot follow (rewriteStaticSharedForAccessChecks).
template <class T>
inline T* opaque(T* p) {
  asm volatile("" : "+r"(p));
  return p;
}
}  // namespace cuset_sim

// ---- qualifiers ----
#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __noinline__
#undef __shared__
#undef __constant__
#undef __managed__
#undef __launch_bounds__
#undef __grid_constant__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
// Empty, not __attribute__((noinline)): libstdc++ and libcu++ write __attribute__((__noinline__)),
// which would expand to a nested attribute; inlining is not observable to a kernel anyway.
#define __noinline__
// A block runs on one host thread and a host thread runs one block at a time, so a thread_local is
// exactly one copy per running block.
#define __shared__ static thread_local
#define __constant__
#define __managed__
#define __grid_constant__
#define __launch_bounds__(...)

// ---- built-in variables ----
#define threadIdx (::cuset_sim::tls_thread->threadIdx)
#define blockIdx (::cuset_sim::tls_thread->block->blockIdx)
#define blockDim (::cuset_sim::tls_thread->block->blockDim)
#define gridDim (::cuset_sim::tls_thread->block->gridDim)
#define warpSize 32

namespace cuset_sim {

template <class T>
inline std::uint64_t to_bits(const T& v) {
  static_assert(sizeof(T) <= 8, "warp collectives move at most 8 bytes per lane");
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
inline T from_bits(std::uint64_t b) {
  T v;
  std::memcpy(static_cast<void*>(&v), &b, sizeof(T));
  return v;
}
template <WarpOp Op, class T>
inline T shfl(int line, unsigned mask, T var, int arg, int width = 32) {
  return from_bits<T>(warp_collective(Op, mask, to_bits(var), arg, width, line).value);
}
inline unsigned reduce(int line, WarpOp op, unsigned mask, unsigned v) {
  return static_cast<unsigned>(warp_collective(op, mask, v, 0, 32, line).value);
}
inline unsigned reduce_add(int line, unsigned mask, unsigned v) { return reduce(line, WarpOp::reduce_add, mask, v); }
inline int reduce_add(int line, unsigned mask, int v) { return static_cast<int>(reduce(line, WarpOp::reduce_add, mask, static_cast<unsigned>(v))); }
inline unsigned reduce_min(int line, unsigned mask, unsigned v) { return reduce(line, WarpOp::reduce_min, mask, v); }
inline int reduce_min(int line, unsigned mask, int v) {
  return static_cast<int>(reduce(line, WarpOp::reduce_min_signed, mask, static_cast<unsigned>(v)));
}
inline unsigned reduce_max(int line, unsigned mask, unsigned v) { return reduce(line, WarpOp::reduce_max, mask, v); }
inline int reduce_max(int line, unsigned mask, int v) {
  return static_cast<int>(reduce(line, WarpOp::reduce_max_signed, mask, static_cast<unsigned>(v)));
}
template <class T>
inline unsigned match_any(int line, unsigned mask, T v) {
  return static_cast<unsigned>(warp_collective(WarpOp::match_any, mask, to_bits(v), 0, 32, line).value);
}
template <class T>
inline unsigned match_all(int line, unsigned mask, T v, int* pred) {
  const WarpResult r = warp_collective(WarpOp::match_all, mask, to_bits(v), 0, 32, line);
  *pred = r.predicate;
  return static_cast<unsigned>(r.value);
}
// ---- kernel entry points: one per manifest kernel, generated after the candidate's code ----
template <class T>
constexpr ParamKind param_kind() {
  if constexpr (std::is_pointer_v<T>)
    return ParamKind::pointer;
  else if constexpr (std::is_integral_v<T>)
    return ParamKind::integer;
  else if constexpr (std::is_floating_point_v<T>)
    return ParamKind::floating;
  else
    return ParamKind::other;
}
template <class F>
struct Signature;
template <class... P>
struct Signature<void (*)(P...)> {
  static constexpr int count = sizeof...(P);
  static constexpr unsigned sizes[sizeof...(P) + 1] = {static_cast<unsigned>(sizeof(P))..., 0u};
  static constexpr ParamKind kinds[sizeof...(P) + 1] = {param_kind<std::remove_cv_t<P>>()..., ParamKind::other};
  template <auto F, std::size_t... I>
  static void call(void** args, std::index_sequence<I...>) {
    F(*static_cast<std::remove_cv_t<P>*>(args[I])...);
  }
};
template <auto F>
void invoke(void** args) {
  using S = Signature<decltype(F)>;
  S::template call<F>(args, std::make_index_sequence<S::count>{});
}
template <auto F>
KernelEntry entry(const char* name) {
  using S = Signature<decltype(F)>;
  return KernelEntry{name, &invoke<F>, S::count, S::sizes, S::kinds};
}

inline void syncwarp(int line, unsigned mask = 0xffffffffu) { warp_collective(WarpOp::sync, mask, 0, 0, 32, line); }
inline int device_printf(const char*, ...) { return 0; }  // kernels print nowhere in the sandbox

// ---- atomics: really atomic across host threads (blocks run concurrently) ----
// Atomics are the accesses the host compiler's alignment check does not see (builtins, not loads and
// stores); a GPU faults on a misaligned one like on any other access.
// Not templates: a template called from the prelude's inline atomics would be instantiated again in
// every candidate's host build (bench_sim host_build), used or not.
inline void check_atomic_alignment(const void* address, std::size_t size) {
  if (reinterpret_cast<std::uintptr_t>(address) % size != 0) misaligned(address, size, "atomic operation");
}

}  // namespace cuset_sim

// ---- synchronisation ----
#define __syncthreads() ((void)::cuset_sim::block_barrier(::cuset_sim::BlockOp::sync, 0, __LINE__))
#define __syncthreads_count(p) ::cuset_sim::block_barrier(::cuset_sim::BlockOp::count, (p) ? 1 : 0, __LINE__)
#define __syncthreads_and(p) ::cuset_sim::block_barrier(::cuset_sim::BlockOp::all, (p) ? 1 : 0, __LINE__)
#define __syncthreads_or(p) ::cuset_sim::block_barrier(::cuset_sim::BlockOp::any, (p) ? 1 : 0, __LINE__)
#define __syncwarp(...) ::cuset_sim::syncwarp(__LINE__ __VA_OPT__(, ) __VA_ARGS__)
#define __shfl_sync(...) ::cuset_sim::shfl<::cuset_sim::WarpOp::shfl_idx>(__LINE__, __VA_ARGS__)
#define __shfl_up_sync(...) ::cuset_sim::shfl<::cuset_sim::WarpOp::shfl_up>(__LINE__, __VA_ARGS__)
#define __shfl_down_sync(...) ::cuset_sim::shfl<::cuset_sim::WarpOp::shfl_down>(__LINE__, __VA_ARGS__)
#define __shfl_xor_sync(...) ::cuset_sim::shfl<::cuset_sim::WarpOp::shfl_xor>(__LINE__, __VA_ARGS__)
#define __ballot_sync(mask, p) \
  static_cast<unsigned>(::cuset_sim::warp_collective(::cuset_sim::WarpOp::ballot, (mask), (p) ? 1 : 0, 0, 32, __LINE__).value)
#define __any_sync(mask, p) ::cuset_sim::warp_collective(::cuset_sim::WarpOp::any, (mask), (p) ? 1 : 0, 0, 32, __LINE__).predicate
#define __all_sync(mask, p) ::cuset_sim::warp_collective(::cuset_sim::WarpOp::all, (mask), (p) ? 1 : 0, 0, 32, __LINE__).predicate
#define __match_any_sync(mask, v) ::cuset_sim::match_any(__LINE__, (mask), (v))
#define __match_all_sync(mask, v, pred) ::cuset_sim::match_all(__LINE__, (mask), (v), (pred))
#define __reduce_add_sync(mask, v) ::cuset_sim::reduce_add(__LINE__, (mask), (v))
#define __reduce_min_sync(mask, v) ::cuset_sim::reduce_min(__LINE__, (mask), (v))
#define __reduce_max_sync(mask, v) ::cuset_sim::reduce_max(__LINE__, (mask), (v))
#define __reduce_and_sync(mask, v) ::cuset_sim::reduce(__LINE__, ::cuset_sim::WarpOp::reduce_and, (mask), (v))
#define __reduce_or_sync(mask, v) ::cuset_sim::reduce(__LINE__, ::cuset_sim::WarpOp::reduce_or, (mask), (v))
#define __reduce_xor_sync(mask, v) ::cuset_sim::reduce(__LINE__, ::cuset_sim::WarpOp::reduce_xor, (mask), (v))
#define __activemask() ::cuset_sim::active_mask()
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---- kernel-side errors and misc ----
#define __trap() ::cuset_sim::trap("__trap() called", __LINE__)
#define __brkpt() ::cuset_sim::trap("__brkpt() called", __LINE__)
#undef assert
#define assert(e) ((e) ? (void)0 : ::cuset_sim::trap("assertion failed: " #e, __LINE__))
#define printf(...) ::cuset_sim::device_printf(__VA_ARGS__)
inline long long clock64() { return static_cast<long long>(__builtin_ia32_rdtsc()); }
inline void __nanosleep(unsigned) {}
inline void* __cuset_dynamic_shared() { return ::cuset_sim::dynamic_shared(); }

// ---- address spaces: shared memory has 32-bit addresses of its own (memory_spaces.cpp) ----
inline std::size_t __cvta_generic_to_shared(const void* p) { return ::cuset_sim::shared_address(p); }
inline void* __cvta_shared_to_generic(std::size_t a) { return ::cuset_sim::shared_pointer(a, -1); }
inline std::size_t __cvta_generic_to_global(const void* p) { return reinterpret_cast<std::size_t>(p); }
inline void* __cvta_global_to_generic(std::size_t a) { return reinterpret_cast<void*>(a); }

// ---- atomics ----
#define CUSET_SIM_ATOMIC_TARGET(a) (::cuset_sim::check_atomic_alignment((a), sizeof(*(a))), (a))
// A compare-and-swap loop: `o` holds the current value, NEW (an expression of o) the value to store.
#define CUSET_SIM_ATOMIC_UPDATE(T, a, NEW)                                                                          \
  {                                                                                                                 \
    ::cuset_sim::check_atomic_alignment(a, sizeof(T));                                                              \
    T o;                                                                                                            \
    __atomic_load(a, &o, __ATOMIC_RELAXED);                                                                         \
    T desired = (NEW);                                                                                              \
    while (!__atomic_compare_exchange(a, &o, &desired, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) desired = (NEW); \
    return o;                                                                                                       \
  }
#define CUSET_SIM_ATOMIC_ARITH(T)                                                                                                                  \
  CUSET_SIM_UNCHECKED inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(CUSET_SIM_ATOMIC_TARGET(a), v, __ATOMIC_SEQ_CST); }                \
  CUSET_SIM_UNCHECKED inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(CUSET_SIM_ATOMIC_TARGET(a), v, __ATOMIC_SEQ_CST); }                \
  CUSET_SIM_UNCHECKED inline T atomicExch(T* a, T v) { return __atomic_exchange_n(CUSET_SIM_ATOMIC_TARGET(a), v, __ATOMIC_SEQ_CST); }              \
  CUSET_SIM_UNCHECKED inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(CUSET_SIM_ATOMIC_TARGET(a), v, __ATOMIC_SEQ_CST); }                \
  CUSET_SIM_UNCHECKED inline T atomicOr(T* a, T v) { return __atomic_fetch_or(CUSET_SIM_ATOMIC_TARGET(a), v, __ATOMIC_SEQ_CST); }                  \
  CUSET_SIM_UNCHECKED inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(CUSET_SIM_ATOMIC_TARGET(a), v, __ATOMIC_SEQ_CST); }                \
  CUSET_SIM_UNCHECKED inline T atomicMin(T* a, T v) CUSET_SIM_ATOMIC_UPDATE(T, a, v < o ? v : o) CUSET_SIM_UNCHECKED inline T atomicMax(T* a, T v) \
      CUSET_SIM_ATOMIC_UPDATE(T, a, v > o ? v : o) CUSET_SIM_UNCHECKED inline T                                                                    \
      atomicCAS(T* a, T compare, T v) {                                                                                                            \
    __atomic_compare_exchange_n(CUSET_SIM_ATOMIC_TARGET(a), &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                               \
    return compare;                                                                                                                                \
  }
CUSET_SIM_ATOMIC_ARITH(int)
CUSET_SIM_ATOMIC_ARITH(unsigned int)
CUSET_SIM_ATOMIC_ARITH(unsigned long long)
CUSET_SIM_ATOMIC_ARITH(long long)
#undef CUSET_SIM_ATOMIC_ARITH
CUSET_SIM_UNCHECKED inline unsigned short atomicCAS(unsigned short* a, unsigned short compare, unsigned short v) {
  __atomic_compare_exchange_n(CUSET_SIM_ATOMIC_TARGET(a), &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}
CUSET_SIM_UNCHECKED inline unsigned atomicInc(unsigned* a, unsigned limit)
    CUSET_SIM_ATOMIC_UPDATE(unsigned, a, o >= limit ? 0u : o + 1) CUSET_SIM_UNCHECKED inline unsigned atomicDec(unsigned* a, unsigned limit)
        CUSET_SIM_ATOMIC_UPDATE(unsigned, a, (o == 0 || o > limit) ? limit : o - 1) CUSET_SIM_UNCHECKED inline float atomicAdd(float* a, float v)
            CUSET_SIM_ATOMIC_UPDATE(float, a, o + v) CUSET_SIM_UNCHECKED inline double atomicAdd(double* a, double v)
                CUSET_SIM_ATOMIC_UPDATE(double, a, o + v) CUSET_SIM_UNCHECKED
    inline float atomicExch(float* a, float v) CUSET_SIM_ATOMIC_UPDATE(float, a, v) CUSET_SIM_UNCHECKED inline float atomicMin(float* a, float v)
        CUSET_SIM_ATOMIC_UPDATE(float, a, fminf(o, v)) CUSET_SIM_UNCHECKED inline float atomicMax(float* a, float v)
            CUSET_SIM_ATOMIC_UPDATE(float, a, fmaxf(o, v)) CUSET_SIM_UNCHECKED inline __half atomicAdd(__half* a, __half v)
                CUSET_SIM_ATOMIC_UPDATE(__half, a, __float2half(__half2float(o) + __half2float(v))) CUSET_SIM_UNCHECKED inline __nv_bfloat16
    atomicAdd(__nv_bfloat16* a, __nv_bfloat16 v)
        CUSET_SIM_ATOMIC_UPDATE(__nv_bfloat16, a, __float2bfloat16(__bfloat162float(o) + __bfloat162float(v)))
#undef CUSET_SIM_ATOMIC_UPDATE
#undef CUSET_SIM_ATOMIC_TARGET
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicExch_block atomicExch
#define atomicMin_block atomicMin
#define atomicMax_block atomicMax
#define atomicCAS_block atomicCAS
#define atomicAnd_block atomicAnd
#define atomicOr_block atomicOr
#define atomicXor_block atomicXor

    // ---- loads and stores with cache hints ----
    template <class T>
    inline T __ldg(const T* p) {
  return *p;
}
template <class T>
inline T __ldcg(const T* p) {
  return *p;
}
template <class T>
inline T __ldca(const T* p) {
  return *p;
}
template <class T>
inline T __ldcs(const T* p) {
  return *p;
}
template <class T>
inline T __ldlu(const T* p) {
  return *p;
}
template <class T>
inline T __ldcv(const T* p) {
  return *p;
}
template <class T>
inline void __stcg(T* p, T v) {
  *p = v;
}
template <class T>
inline void __stcs(T* p, T v) {
  *p = v;
}
template <class T>
inline void __stwb(T* p, T v) {
  *p = v;
}
template <class T>
inline void __stwt(T* p, T v) {
  *p = v;
}

// ---- min/max as CUDA overloads them for every arithmetic pair ----
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> min(A a, B b) {
  return b < a ? b : a;
}
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> max(A a, B b) {
  return a < b ? b : a;
}
inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umax(unsigned a, unsigned b) { return a < b ? b : a; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a < b ? b : a; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a < b ? b : a; }

// ---- float math ----
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }

// Fast intrinsics as NVRTC lowers them (PTX: ex2/lg2/sin/cos/div .approx.f32, no flush to zero): each
// is the same sequence of float operations, so the rounding of x*log2(e) before ex2 (the source of
// __expf's 2 + 1.173|x| ulp error), of lg2(x)*ln(2), of 1/y before the multiply, and __fdividef's zero
// for 2^126 < |y| are the GPU's. Modelled, not exact: the approximate instructions themselves (ex2, lg2,
// sin, cos within |x| <= 100 pi) are computed exactly here, within their documented 2 ulp / 2^-20.5.
namespace __cuset_approx {
inline float ex2(float x) { return exp2f(x); }
inline float lg2(float x) { return log2f(x); }
// Past 100 pi the SFU's error grows with |x|: modelled by reducing the angle through a float number
// of turns (the unit the SFU takes), whose rounding is what loses the precision.
inline float reduced(float x) {
  if (!(fabsf(x) > 314.159265f)) return x;
  const double turns = static_cast<double>(x * 0.159154943f);
  return static_cast<float>(6.283185307179586 * (turns - std::nearbyint(turns)));
}
inline float sin(float x) { return sinf(reduced(x)); }
inline float cos(float x) { return cosf(reduced(x)); }
// div.approx.f32: a * (1/b); for 2^126 < |b| it is 0 for a finite a (NaN for an infinite one).
inline float div(float a, float b) {
  if (fabsf(b) > 0x1p126f && !std::isnan(b)) return std::isinf(a) ? NAN : 0.0f * a * b / fabsf(b);
  return a * (1.0f / b);
}
}  // namespace __cuset_approx
inline float __expf(float x) { return __cuset_approx::ex2(x * 0x1.715476p+0f); }   // log2(e) as the float NVRTC uses
inline float __exp10f(float x) { return __cuset_approx::ex2(x * 0x1.a934fp+1f); }  // log2(10)
inline float __logf(float x) { return __cuset_approx::lg2(x) * 0x1.62e43p-1f; }    // ln(2)
inline float __log2f(float x) { return __cuset_approx::lg2(x); }
inline float __log10f(float x) { return __cuset_approx::lg2(x) * 0x1.344136p-2f; }  // log10(2)
inline float __powf(float a, float b) { return __cuset_approx::ex2(b * __cuset_approx::lg2(a)); }
inline float __sinf(float x) { return __cuset_approx::sin(x); }
inline float __cosf(float x) { return __cuset_approx::cos(x); }
inline float __tanf(float x) { return __cuset_approx::div(__cuset_approx::sin(x), __cuset_approx::cos(x)); }
inline void __sincosf(float x, float* s, float* c) {
  *s = __cuset_approx::sin(x);
  *c = __cuset_approx::cos(x);
}
inline float sinpif(float x) { return sinf(static_cast<float>(M_PI) * x); }
inline float cospif(float x) { return cosf(static_cast<float>(M_PI) * x); }
inline void sincospif(float x, float* s, float* c) { sincosf(static_cast<float>(M_PI) * x, s, c); }
inline float __fdividef(float a, float b) { return __cuset_approx::div(a, b); }
inline float fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fmaf_rz(float a, float b, float c) { return fmaf(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }  // NaN -> 0
inline int __finitef(float x) { return std::isfinite(x); }
inline int __isinff(float x) { return std::isinf(x); }
inline int __isnanf(float x) { return std::isnan(x); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * static_cast<float>(M_SQRT1_2)); }
inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
inline float erfinvf(float y) {
  if (y <= -1.0f) return y == -1.0f ? -INFINITY : NAN;
  if (y >= 1.0f) return y == 1.0f ? INFINITY : NAN;
  // Initial guess (Winitzki) refined by Newton steps on erf in double precision.
  const double a = 0.147, l = std::log(1.0 - double(y) * y), t = 2.0 / (M_PI * a) + l / 2.0;
  double x = std::copysign(std::sqrt(std::sqrt(t * t - l / a) - t), double(y));
  for (int i = 0; i < 3; ++i) x -= (std::erf(x) - y) / (2.0 / std::sqrt(M_PI) * std::exp(-x * x));
  return static_cast<float>(x);
}
inline float erfcinvf(float y) { return erfinvf(1.0f - y); }
inline float normcdfinvf(float p) { return -static_cast<float>(M_SQRT2) * erfcinvf(2.0f * p); }

// ---- bit casts and conversions ----
inline float __int_as_float(int x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
inline int __float_as_int(float f) {
  int x;
  std::memcpy(&x, &f, 4);
  return x;
}
inline float __uint_as_float(unsigned x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
inline unsigned __float_as_uint(float f) {
  unsigned x;
  std::memcpy(&x, &f, 4);
  return x;
}
inline double __longlong_as_double(long long x) {
  double d;
  std::memcpy(&d, &x, 8);
  return d;
}
inline long long __double_as_longlong(double d) {
  long long x;
  std::memcpy(&x, &d, 8);
  return x;
}
inline int __double2hiint(double d) { return static_cast<int>(__double_as_longlong(d) >> 32); }
inline int __double2loint(double d) { return static_cast<int>(__double_as_longlong(d)); }
inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double(static_cast<long long>((static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) | static_cast<unsigned>(lo)));
}
inline int __float2int_rn(float x) { return static_cast<int>(nearbyintf(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(truncf(x)); }
inline int __float2int_rd(float x) { return static_cast<int>(floorf(x)); }
inline int __float2int_ru(float x) { return static_cast<int>(ceilf(x)); }
inline unsigned __float2uint_rn(float x) { return static_cast<unsigned>(nearbyintf(x)); }
inline unsigned __float2uint_rz(float x) { return static_cast<unsigned>(truncf(x)); }
inline long long __float2ll_rn(float x) { return static_cast<long long>(nearbyintf(x)); }
inline long long __float2ll_rz(float x) { return static_cast<long long>(truncf(x)); }
inline int __double2int_rn(double x) { return static_cast<int>(nearbyint(x)); }
inline int __double2int_rz(double x) { return static_cast<int>(trunc(x)); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned x) { return static_cast<float>(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }
inline double __int2double_rn(int x) { return x; }

// ---- integer intrinsics ----
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
  return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) | __brev(static_cast<unsigned>(x >> 32));
}
inline unsigned __umulhi(unsigned a, unsigned b) { return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32); }
inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline long long __mul64hi(long long a, long long b) { return static_cast<long long>((static_cast<__int128>(a) * b) >> 64); }
inline int __mul24(int a, int b) { return (a << 8 >> 8) * (b << 8 >> 8); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __hadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b) >> 1); }
inline int __rhadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b + 1) >> 1); }
inline unsigned __uhadd(unsigned a, unsigned b) { return static_cast<unsigned>((static_cast<unsigned long long>(a) + b) >> 1); }
inline unsigned __urhadd(unsigned a, unsigned b) { return static_cast<unsigned>((static_cast<unsigned long long>(a) + b + 1) >> 1); }
inline unsigned __sad(int a, int b, unsigned c) { return c + static_cast<unsigned>(a > b ? a - b : b - a); }
inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return c + (a > b ? a - b : b - a); }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<unsigned>((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  return static_cast<unsigned>((((static_cast<unsigned long long>(hi) << 32) | lo) << (shift & 31)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  return static_cast<unsigned>((((static_cast<unsigned long long>(hi) << 32) | lo) >> (shift & 31)));
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned shift) { return __funnelshift_l(lo, hi, shift > 32 ? 32 : shift); }
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned shift) { return __funnelshift_r(lo, hi, shift > 32 ? 32 : shift); }

// ---- half and bfloat16 math that CUDA's headers define only for device code; computed in float ----
#define CUSET_SIM_HALF_UNARY(scalar, pair, fn)                                                       \
  inline __half scalar(__half x) { return __float2half(fn(__half2float(x))); }                       \
  inline __nv_bfloat16 scalar(__nv_bfloat16 x) { return __float2bfloat16(fn(__bfloat162float(x))); } \
  inline __half2 pair(__half2 v) { return __halves2half2(scalar(v.x), scalar(v.y)); }                \
  inline __nv_bfloat162 pair(__nv_bfloat162 v) { return __halves2bfloat162(scalar(v.x), scalar(v.y)); }
namespace cuset_sim {
inline float rcp(float x) { return 1.0f / x; }
inline float rsqrt_(float x) { return 1.0f / sqrtf(x); }
}  // namespace cuset_sim
CUSET_SIM_HALF_UNARY(hexp, h2exp, expf)
CUSET_SIM_HALF_UNARY(hexp2, h2exp2, exp2f)
CUSET_SIM_HALF_UNARY(hexp10, h2exp10, exp10f)
CUSET_SIM_HALF_UNARY(hlog, h2log, logf)
CUSET_SIM_HALF_UNARY(hlog2, h2log2, log2f)
CUSET_SIM_HALF_UNARY(hlog10, h2log10, log10f)
CUSET_SIM_HALF_UNARY(hsqrt, h2sqrt, sqrtf)
CUSET_SIM_HALF_UNARY(hrsqrt, h2rsqrt, ::cuset_sim::rsqrt_)
CUSET_SIM_HALF_UNARY(hrcp, h2rcp, ::cuset_sim::rcp)
CUSET_SIM_HALF_UNARY(hsin, h2sin, sinf)
CUSET_SIM_HALF_UNARY(hcos, h2cos, cosf)
CUSET_SIM_HALF_UNARY(htanh, h2tanh, tanhf)
CUSET_SIM_HALF_UNARY(htrunc, h2trunc, truncf)
CUSET_SIM_HALF_UNARY(hceil, h2ceil, ceilf)
CUSET_SIM_HALF_UNARY(hfloor, h2floor, floorf)
CUSET_SIM_HALF_UNARY(hrint, h2rint, nearbyintf)
#undef CUSET_SIM_HALF_UNARY
inline __half __hfma(__half a, __half b, __half c) { return __float2half(fmaf(__half2float(a), __half2float(b), __half2float(c))); }
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return __float2bfloat16(fmaf(__bfloat162float(a), __bfloat162float(b), __bfloat162float(c)));
}
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __halves2half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
  return __halves2bfloat162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
