#pragma once
// NVRTC compilation of candidate kernels to cubin (or PTX for compute_XX targets), with the
// compatibility prelude, a content-addressed on-disk cache, and a check that every kernel the manifest
// names exists in the compiled module. In process, or (`isolated`, as evaluations do) in helper
// processes under a time limit.
#include <chrono>
#include <cstddef>
#include <memory>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/evaluator/compile/cubin_symbols.hpp"

namespace cuset {

struct CompileOptions {
  std::string arch = "sm_90";  // sm_XX -> cubin; compute_XX -> PTX
  bool lineinfo = true;
  std::vector<std::string> extraOptions;
  // CUDA headers (cuda_fp16.h, ...). Empty: $CUSET_CUDA_INCLUDE, else the toolkit found at build time.
  std::filesystem::path cudaIncludeDir;
  // Compile in `cuset __nvrtc-worker` helpers ($CUSET_WORKER or this binary), each compile under
  // `timeout`: past it the helper is killed and the candidate gets a compile_error saying so.
  bool isolated = false;
  std::chrono::milliseconds timeout{60000};
};

struct CompileOutput {
  enum class Status { ok, compileError, missingKernels };
  Status status = Status::ok;
  std::string log;  // NVRTC's log (warnings too), as the user would see it
  std::vector<std::byte> image;
  bool isCubin = true;
  std::map<std::string, std::string> loweredNames;  // manifest kernel name -> symbol in the module
  std::vector<std::string> missingKernels;          // status == missingKernels
  // Manifest kernel name -> what the cubin says it needs (cubin targets; empty for PTX).
  std::map<std::string, KernelResources> resources;
  bool cacheHit = false;
  bool uncacheable = false;   // the compile hit its time limit or lost its helper: not a property of the source alone
  double milliseconds = 0.0;  // wall time of this call (NVRTC, or the cache lookup)
};

namespace detail {
class NvrtcHelperPool;
}

class NvrtcCompiler {
 public:
  // Throws cuset::Error for an architecture NVRTC does not support or a CUDA include dir without
  // cuda_fp16.h. `cacheDir` empty = no cache.
  NvrtcCompiler(CompileOptions options, std::filesystem::path cacheDir);

  // Thread-safe: NVRTC programs are independent, and cache writes are atomic renames.
  CompileOutput compile(std::string_view source, const std::vector<std::string>& kernelNames) const;

  const CompileOptions& options() const { return options_; }
  const std::filesystem::path& cacheDir() const { return cacheDir_; }

  static std::string nvrtcVersion();         // "13.0"
  static std::vector<int> supportedArchs();  // {75, 80, ...}

 private:
  CompileOutput compileUncached(std::string_view source, const std::vector<std::string>& kernelNames) const;
  std::string cacheKey(std::string_view source, const std::vector<std::string>& kernelNames) const;
  std::optional<CompileOutput> loadCached(const std::string& key) const;
  void storeCached(const std::string& key, const CompileOutput& output) const;

  CompileOptions options_;
  std::filesystem::path cacheDir_;
  std::vector<std::string> optionStrings_;
  std::shared_ptr<detail::NvrtcHelperPool> helpers_;  // null: in process
};

}  // namespace cuset
