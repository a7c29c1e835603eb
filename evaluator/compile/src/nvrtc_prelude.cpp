#include "cuset/evaluator/compile/nvrtc_prelude.hpp"

#include <cstdint>
#include <string>

#include "cuset/common/hash.hpp"

namespace cuset {
namespace {

// Pre-included before the candidate (NVRTC --pre-include), so the candidate's own line numbers in
// compiler messages stay as the author wrote them.
constexpr std::string_view kPrelude = R"(#pragma once
#ifndef CUSET_PRELUDE
#define CUSET_PRELUDE 1
#ifdef CUSET_NEEDS_HALF_TYPES
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#endif
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef long long intptr_t;
typedef unsigned long long uintptr_t;
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef HUGE_VALF
#define HUGE_VALF __int_as_float(0x7f800000)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_SQRT2
#define M_SQRT2 1.41421356237309504880
#endif
#ifndef M_SQRT1_2
#define M_SQRT1_2 0.70710678118654752440
#endif
#ifndef M_2_SQRTPI
#define M_2_SQRTPI 1.12837916709551257390
#endif
#ifndef M_LN2
#define M_LN2 0.69314718055994530942
#endif
#ifndef M_E
#define M_E 2.7182818284590452354
#endif
#endif
)";

constexpr std::string_view kStdint = R"(#pragma once
#include "cuset_prelude.cuh"
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
using ::intptr_t; using ::uintptr_t;
}
#define INT8_MIN (-128)
#define INT8_MAX 127
#define UINT8_MAX 255
#define INT16_MIN (-32768)
#define INT16_MAX 32767
#define UINT16_MAX 65535
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define UINT32_MAX 4294967295U
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define UINT64_MAX 18446744073709551615ULL
)";

constexpr std::string_view kFloat = R"(#pragma once
#ifndef FLT_MAX
#define FLT_MAX 3.402823466e+38F
#define FLT_MIN 1.175494351e-38F
#define FLT_EPSILON 1.192092896e-07F
#define DBL_MAX 1.7976931348623158e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.2204460492503131e-016
#define FLT_MANT_DIG 24
#define DBL_MANT_DIG 53
#endif
)";

constexpr std::string_view kLimits = R"(#pragma once
#ifndef INT_MAX
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define SHRT_MIN (-32768)
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MIN (-2147483647 - 1)
#define INT_MAX 2147483647
#define UINT_MAX 4294967295U
#define LLONG_MIN (-9223372036854775807LL - 1)
#define LLONG_MAX 9223372036854775807LL
#define ULLONG_MAX 18446744073709551615ULL
#endif
)";

// NVRTC already declares the CUDA math functions (expf, sqrtf, fmaxf, ...); these make the usual
// includes harmless.
constexpr std::string_view kMath = R"(#pragma once
#include "cuset_prelude.cuh"
)";

constexpr std::string_view kEmpty = "#pragma once\n";

// NVRTC has no C++ standard library; libcu++ has these in cuda::std, and device code written for nvcc
// says std::numeric_limits and std::is_same.
constexpr std::string_view kStdLimits = "#pragma once\n#include <cuda/std/limits>\nnamespace std { using namespace cuda::std; }\n";
constexpr std::string_view kStdTypeTraits = "#pragma once\n#include <cuda/std/type_traits>\nnamespace std { using namespace cuda::std; }\n";

// Assertions compile away, as under NDEBUG: a failing device assert would only turn a wrong answer into
// a runtime error.
constexpr std::string_view kAssert = "#pragma once\n#ifndef assert\n#define assert(e) ((void)0)\n#endif\n";

std::string computeVersion() {
  ContentHasher h;
  for (const auto& header : nvrtcVirtualHeaders()) h.add(header.name).add(header.content);
  return h.digest().hex().substr(0, 16);
}

}  // namespace

bool sourceNeedsHalfTypes(std::string_view source) {
  for (std::string_view marker : {"half", "bfloat16", "bf16", "__h"}) {
    if (source.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

const std::vector<VirtualHeader>& nvrtcVirtualHeaders() {
  static const std::vector<VirtualHeader> headers = {
      {kPreludeHeaderName, kPrelude},
      {"cstdint", kStdint},
      {"stdint.h", kStdint},
      {"cfloat", kFloat},
      {"float.h", kFloat},
      {"climits", kLimits},
      {"limits.h", kLimits},
      {"cmath", kMath},
      {"math.h", kMath},
      {"cstddef", kEmpty},
      {"stddef.h", kEmpty},
      {"cstdio", kEmpty},
      {"stdio.h", kEmpty},
      {"cassert", kAssert},
      {"assert.h", kAssert},
      {"cuda.h", kEmpty},
      {"limits", kStdLimits},
      {"type_traits", kStdTypeTraits},
  };
  return headers;
}

std::string_view nvrtcPreludeVersion() {
  static const std::string version = computeVersion();
  return version;
}

}  // namespace cuset
