#pragma once
// WMMA (nvcuda::wmma, CUDA's <mma.h>) on the CPU simulator, in place of the toolkit's header, which
// is device-only.
//
// CUDA leaves the mapping of a fragment's elements to the lanes of a warp unspecified, so a portable
// kernel can only apply the same operation to every x[i]. Here every lane holds the whole tile
// (row-major, num_elements = rows * cols) and does the whole operation: each lane's result is the
// warp's, and x[i] loops over the tile. The operations are still warp-collective: load_matrix_sync,
// store_matrix_sync and mma_sync wait for every live lane of the warp at the same operation, so a
// divergent one is a runtime error, as the other *_sync collectives are. mma_sync computes a product
// once and hands it to every lane whose fragments are bitwise the same, so the replication costs a
// comparison per lane, not the arithmetic.
//
// Arithmetic (docs/simulator.md): products and sums in float for half, bf16 and tf32 inputs (tf32
// operands truncated to 10 mantissa bits, as the tensor cores ignore the low 13), k in ascending
// order with one fused multiply-add per term; exact 32-bit wrap-around sums for 8-bit integers
// (saturating with satf); double FMAs for double; a half accumulator is rounded to half once per mma.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cuset_sim/runtime.hpp"

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
namespace precision {
struct tf32 {};
}  // namespace precision

inline float __float_to_tf32(float f) {
  // Round to nearest (ties away) at 10 mantissa bits, as cvt.rna.tf32.f32; NaN and Inf unchanged.
  if (!std::isfinite(f)) return f;
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits = (bits + 0x1000u) & 0xffffe000u;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

namespace detail {

template <class T>
struct Storage {
  using type = T;
};
template <>
struct Storage<precision::tf32> {
  using type = float;
};

template <class T>
constexpr bool isHalfLike = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <class T>
constexpr bool isByte = std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char>;

// The shapes CUDA defines for sm_80 and sm_90 (the sub-byte experimental ones aside).
template <int M, int N, int K>
constexpr bool isHalfShape = (M == 16 && N == 16 && K == 16) || (M == 32 && N == 8 && K == 16) || (M == 8 && N == 32 && K == 16);

template <class Use, int M, int N, int K, class T>
constexpr bool validFragment() {
  if constexpr (std::is_same_v<Use, accumulator>) {
    if constexpr (std::is_same_v<T, float>) return isHalfShape<M, N, K> || (M == 16 && N == 16 && K == 8);
    if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, int>) return isHalfShape<M, N, K>;
    if constexpr (std::is_same_v<T, double>) return M == 8 && N == 8 && K == 4;
    return false;
  } else {
    if constexpr (isHalfLike<T> || isByte<T>) return isHalfShape<M, N, K>;
    if constexpr (std::is_same_v<T, precision::tf32>) return M == 16 && N == 16 && K == 8;
    if constexpr (std::is_same_v<T, double>) return M == 8 && N == 8 && K == 4;
    return false;
  }
}

template <class Use, int M, int N, int K>
struct Extent;
template <int M, int N, int K>
struct Extent<matrix_a, M, N, K> {
  static constexpr int rows = M, cols = K;
};
template <int M, int N, int K>
struct Extent<matrix_b, M, N, K> {
  static constexpr int rows = K, cols = N;
};
template <int M, int N, int K>
struct Extent<accumulator, M, N, K> {
  static constexpr int rows = M, cols = N;
};

template <class T>
double toDouble(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return static_cast<double>(__half2float(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return static_cast<double>(__bfloat162float(v));
  else
    return static_cast<double>(v);
}

template <class T>
float toFloat(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return static_cast<float>(v);
}

inline float truncateToTf32(float f) {
  if (!std::isfinite(f)) return f;
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits &= 0xffffe000u;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline void warpWide(cuset_sim::WarpOp op, int line) { cuset_sim::warp_collective(op, 0xffffffffu, 0, 0, 32, line); }

}  // namespace detail

template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
  static_assert(detail::validFragment<Use, M, N, K, T>(), "wmma::fragment: no such shape and type on sm_80/sm_90");
  static_assert(std::is_same_v<Use, accumulator> ? std::is_void_v<Layout> : true, "an accumulator fragment takes no layout");

 public:
  using element_type = typename detail::Storage<T>::type;
  static constexpr int rows = detail::Extent<Use, M, N, K>::rows;
  static constexpr int cols = detail::Extent<Use, M, N, K>::cols;
  static constexpr int num_elements = rows * cols;
  element_type x[num_elements];  // the whole tile, row-major, in every lane
};

template <class Use, int M, int N, int K, class T, class Layout, class V>
inline void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, const V& value) {
  using E = typename fragment<Use, M, N, K, T, Layout>::element_type;
  for (int i = 0; i < f.num_elements; ++i) f.x[i] = static_cast<E>(value);
}

namespace detail {

// Each lane performs the whole tile operation (above): every lane loads and stores the whole tile, which a
// race check of shared memory must not count as lanes racing (prelude.hpp's CUSET_SIM_UNCHECKED).
#ifndef CUSET_SIM_UNCHECKED
#define CUSET_SIM_UNCHECKED __attribute__((no_sanitize_address))
#endif

template <class Frag, class P>
CUSET_SIM_UNCHECKED void loadTile(Frag& f, const P* p, unsigned ldm, bool rowMajor) {
  for (int r = 0; r < Frag::rows; ++r) {
    for (int c = 0; c < Frag::cols; ++c) {
      f.x[r * Frag::cols + c] = rowMajor ? p[static_cast<std::size_t>(r) * ldm + c] : p[static_cast<std::size_t>(c) * ldm + r];
    }
  }
}

}  // namespace detail

template <class Use, int M, int N, int K, class T, class Layout, class P>
inline void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& f, const P* p, unsigned ldm) {
  static_assert(!std::is_same_v<Use, accumulator>, "an accumulator is loaded with a layout_t: load_matrix_sync(acc, p, ldm, mem_row_major)");
  static_assert(std::is_same_v<Layout, row_major> || std::is_same_v<Layout, col_major>, "matrix_a/matrix_b fragments need row_major or col_major");
  detail::warpWide(cuset_sim::WarpOp::wmma_load, __LINE__);
  detail::loadTile(f, p, ldm, std::is_same_v<Layout, row_major>);
}

template <int M, int N, int K, class T, class P>
inline void load_matrix_sync(fragment<accumulator, M, N, K, T>& f, const P* p, unsigned ldm, layout_t layout) {
  detail::warpWide(cuset_sim::WarpOp::wmma_load, __LINE__);
  detail::loadTile(f, p, ldm, layout == mem_row_major);
}

template <int M, int N, int K, class T, class P>
CUSET_SIM_UNCHECKED inline void store_matrix_sync(P* p, const fragment<accumulator, M, N, K, T>& f, unsigned ldm, layout_t layout) {
  detail::warpWide(cuset_sim::WarpOp::wmma_store, __LINE__);
  using Frag = fragment<accumulator, M, N, K, T>;
  for (int r = 0; r < Frag::rows; ++r) {
    for (int c = 0; c < Frag::cols; ++c) {
      const auto v = f.x[r * Frag::cols + c];
      if (layout == mem_row_major)
        p[static_cast<std::size_t>(r) * ldm + c] = v;
      else
        p[static_cast<std::size_t>(c) * ldm + r] = v;
    }
  }
}

template <int M, int N, int K, class TA, class LA, class TB, class LB, class TC, class TD>
inline void mma_sync(fragment<accumulator, M, N, K, TD>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
                     const fragment<matrix_b, M, N, K, TB, LB>& b, const fragment<accumulator, M, N, K, TC>& c, bool satf = false) {
  static_assert(std::is_same_v<TA, TB>, "wmma::mma_sync: matrix_a and matrix_b must have the same type");
  static_assert(std::is_same_v<TC, TD>, "wmma::mma_sync: the accumulators must have the same type");
  static_assert((detail::isHalfLike<TA> && (std::is_same_v<TC, float> || (std::is_same_v<TA, __half> && std::is_same_v<TC, __half>))) ||
                    (detail::isByte<TA> && std::is_same_v<TC, int>) || (std::is_same_v<TA, precision::tf32> && std::is_same_v<TC, float>) ||
                    (std::is_same_v<TA, double> && std::is_same_v<TC, double>),
                "wmma::mma_sync: no such combination of input and accumulator types");
  detail::warpWide(cuset_sim::WarpOp::wmma_mma, __LINE__);
  // The lanes of a warp run one after another on this host thread with (in a portable kernel) equal
  // fragments: the last product's inputs and result are kept, and a lane whose inputs are bitwise
  // the same takes the result instead of redoing the warp's arithmetic. Exact whatever the lanes hold.
  // The memo lives among the library's thread-locals, which the simulator fills with its shared-memory
  // poison when a block starts: it is valid only for the block that wrote it.
  struct Memo {
    std::uint64_t block = 0;
    bool satf = false;
    fragment<matrix_a, M, N, K, TA, LA> a;
    fragment<matrix_b, M, N, K, TB, LB> b;
    fragment<accumulator, M, N, K, TC> c;
    TD out[M * N];
  };
  static thread_local Memo memo;
  if (memo.block == ::cuset_sim::tls_thread->block->serial && memo.satf == satf && std::memcmp(&memo.a, &a, sizeof a) == 0 &&
      std::memcmp(&memo.b, &b, sizeof b) == 0 && std::memcmp(&memo.c, &c, sizeof c) == 0) {
    std::memcpy(static_cast<void*>(d.x), memo.out, sizeof memo.out);
    return;
  }
  std::memcpy(static_cast<void*>(&memo.a), &a, sizeof a);
  std::memcpy(static_cast<void*>(&memo.b), &b, sizeof b);
  std::memcpy(static_cast<void*>(&memo.c), &c, sizeof c);
  memo.satf = satf;
  TD out[M * N];  // d may be c
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      const auto& cij = c.x[i * N + j];
      if constexpr (detail::isByte<TA>) {
        std::int64_t sum = cij;
        for (int k = 0; k < K; ++k) sum += static_cast<std::int64_t>(a.x[i * K + k]) * static_cast<std::int64_t>(b.x[k * N + j]);
        if (satf) {
          sum = std::min<std::int64_t>(std::max<std::int64_t>(sum, std::numeric_limits<int>::min()), std::numeric_limits<int>::max());
          out[i * N + j] = static_cast<int>(sum);
        } else {
          out[i * N + j] = static_cast<int>(static_cast<std::uint32_t>(sum));
        }
      } else if constexpr (std::is_same_v<TA, double>) {
        double sum = cij;
        for (int k = 0; k < K; ++k) sum = std::fma(a.x[i * K + k], b.x[k * N + j], sum);
        out[i * N + j] = sum;
      } else {
        float sum = detail::toFloat(cij);
        for (int k = 0; k < K; ++k) {
          float x = detail::toFloat(a.x[i * K + k]), y = detail::toFloat(b.x[k * N + j]);
          if constexpr (std::is_same_v<TA, precision::tf32>) {
            x = detail::truncateToTf32(x);
            y = detail::truncateToTf32(y);
          }
          sum = std::fmaf(x, y, sum);
        }
        if (satf) {  // infinities to the largest finite value of the accumulator's type, NaN to 0
          const float top = std::is_same_v<TD, __half> ? 65504.0f : std::numeric_limits<float>::max();
          sum = std::isnan(sum) ? 0.0f : std::fmin(std::fmax(sum, -top), top);
        }
        out[i * N + j] = static_cast<TD>(sum);
      }
    }
  }
  std::memcpy(static_cast<void*>(memo.out), out, sizeof out);
  memo.block = ::cuset_sim::tls_thread->block->serial;
  for (int i = 0; i < M * N; ++i) d.x[i] = out[i];
}

}  // namespace wmma
}  // namespace nvcuda
