#pragma once
// A launch plan's library step (DESIGN §3, library_step.hpp) run by the harness through LibTorch's
// dispatcher on views of memory the caller owns (the trial's region on the host, or the GPU's copy of
// it). LibTorch-free interface; library_call.cpp holds the LibTorch side.
#include <cstddef>
#include <string>
#include <vector>

#include "cuset/evaluator/candidate/library_step.hpp"
#include "cuset/evaluator/problem/float32_numerics.hpp"

namespace cuset {

struct LibraryMemory {
  std::byte* base = nullptr;  // the region's start: views give byte offsets from it
  bool cuda = false;          // device memory of LibTorch's CUDA device `device`
  int device = 0;
};

// `step`'s views carry their buffer's byte offset in the region (TensorView::regionByte) beside their
// offset in elements. Functional ops' results are copied into the output views; in-place ops write
// through their arguments. Returns why the op failed (a shape it rejects, an index out of range), or ""
// when it ran. On the CPU, an op this LibTorch has no kernel for in float16/bfloat16 runs in float32 and
// is rounded.
// `numerics`: tf32Convolutions rounds a convolution's input and weight to TF32 first, as cuDNN computes
// float32 convolutions by default on Ampere and later (KernelBench's check predicting such a GPU).
std::string runLibraryCall(const LibraryStep& step, const LibraryMemory& memory, Float32Numerics numerics = Float32Numerics::exact);

// Why `op.overload` may not be a library step, or "": it must be one of the closed set (isLibraryOp),
// exist in this LibTorch, and take no generator (random numbers) and no string argument but the
// few that choose a mode ("reduction", "approximate", ...). Ops that read a file or a device value on
// the host (.item()) are named as such.
std::string libraryOpRefusal(const std::string& op, const std::string& overload);

// The views `step` writes besides its outputs: the arguments its schema marks as written (relu_'s
// self, an out=), and batch norm's running statistics in training mode, which the op updates without
// its schema saying so.
std::vector<TensorView> libraryWrittenArguments(const LibraryStep& step);

}  // namespace cuset
