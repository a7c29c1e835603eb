#pragma once
// The recorder's build of one `load_inline` extension: its cpp_sources, its cuda_sources with device
// bodies removed and launches rewritten (cuda_source_split.hpp), and a registration of its functions,
// compiled by the host C++ compiler against the torch stand-in (shim/include) into a library the
// recorder loads. Private to cuset_translate.
#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cuset/evaluator/results/verdict.hpp"

namespace cuset::detail {

struct Extension {
  std::string key;  // the recorder's id of the extension (a hash of its sources)
  std::string name;
  std::string cppSources;
  std::string cudaSources;
  std::vector<std::string> functions;
};

struct HostBuild {
  // Empty: built. Else the verdict: invalid_submission (a header outside the policy, inline assembly in
  // host code), compile_error (the host code is not C++) or unsupported (it uses API the stand-in lacks).
  std::optional<Verdict> verdict;
  bool ok() const { return !verdict; }
  std::string reason;
  std::string log;
  std::filesystem::path library;
};

// Where host builds are kept between translations: by content (the stand-in's digest, the sources, the
// functions), and the stand-in's precompiled header, made once. Thread-safe.
class HostBuildCache {
 public:
  HostBuildCache(std::filesystem::path root, std::string digest) : root_(std::move(root)), digest_(std::move(digest)) {}
  // The precompiled torch/extension.h of the stand-in (the header beside its .gch), or empty when it
  // cannot be made (each build then parses the headers itself).
  std::filesystem::path precompiledHeader(std::chrono::milliseconds timeout);
  const std::filesystem::path& root() const { return root_; }
  const std::string& digest() const { return digest_; }

 private:
  std::filesystem::path root_;
  std::string digest_;
  std::mutex mutex_;
  std::optional<std::filesystem::path> pch_;
};

// Builds into `folder` (extension.so), or copies the cached build of the same content there.
HostBuild buildHostLibrary(const Extension& extension, const std::string& hostCuda, const std::filesystem::path& folder,
                           std::chrono::milliseconds timeout, HostBuildCache* cache = nullptr);

// Why a header may not be included by host code (a path, a library the recording does not model), or "".
std::string hostIncludeRefusal(const std::string& source);

}  // namespace cuset::detail
