#pragma once
// A launch plan's library step (DESIGN §3): one ATen op, run by the harness through LibTorch's
// dispatcher on views of memory the caller owns (the trial's region on the host, or the GPU's copy
// of it). LibTorch-free interface; library_call.cpp holds the LibTorch side.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuset {

struct LibraryMemory {
  std::byte* base = nullptr;  // the region's start: views give byte offsets from it
  bool cuda = false;          // device memory of LibTorch's CUDA device `device`
  int device = 0;
};

// `call` is a library step ({"op", "overload", "args", "kwargs", "outputs"}) whose views carry "byte":
// the byte offset of their buffer in the region (beside "offset", in elements from the buffer's start).
// Functional ops' results are copied into the output views; in-place ops write through their
// arguments. Returns why the op failed (a shape it rejects, an index out of range), or "" when it ran.
// On the CPU, an op this LibTorch has no kernel for in float16/bfloat16 runs in float32 and is rounded.
std::string runLibraryCall(const nlohmann::json& call, const LibraryMemory& memory);

// Why `op.overload` may not be a library step, or "": it must be an ATen op with no generator (random
// numbers), no file or string-command argument, and no host read of data (.item()).
std::string libraryOpRefusal(const std::string& op, const std::string& overload);

// The tensors `call` writes besides its outputs, as {"tensor": view} values of its "args" and "kwargs":
// the arguments its schema marks as written (relu_'s self, an out=), and batch norm's running
// statistics in training mode, which the op updates without its schema saying so.
std::vector<nlohmann::json> libraryWrittenArguments(const nlohmann::json& call);

}  // namespace cuset
