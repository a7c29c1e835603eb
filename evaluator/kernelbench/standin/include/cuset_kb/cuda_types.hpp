#pragma once
// CUDA's types and qualifiers for the recorder's host build: the toolkit's own host-compilable
// headers (vector types, half and bfloat16). Device function bodies never reach this build (the
// splitter leaves their signatures only), so no device intrinsic is needed.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector_functions.h>
#include <vector_types.h>

#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif

// Host code sometimes sizes work in warps.
constexpr int warpSize = 32;
