#pragma once
// The recorder's build of one `load_inline` extension: its cpp_sources, its cuda_sources with device
// bodies removed and launches rewritten (cuda_source_split.hpp), and a registration of its functions,
// compiled by the host C++ compiler against the torch stand-in (shim/include) into a library the
// recorder loads. Private to cuset_translate.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace cuset::detail {

struct Extension {
  std::string key;        // the recorder's id of the extension (a hash of its sources)
  std::string name;
  std::string cppSources;
  std::string cudaSources;
  std::vector<std::string> functions;
};

struct HostBuild {
  // "ok", or the verdict: invalid_submission (a header outside the policy, inline assembly in host
  // code), compile_error (the host code is not C++) or unsupported (it uses API the stand-in lacks).
  std::string verdict = "ok";
  std::string reason;
  std::string log;
  std::filesystem::path library;
};

HostBuild buildHostLibrary(const Extension& extension, const std::string& hostCuda, const std::filesystem::path& folder,
                           std::chrono::milliseconds timeout);

// Why a header may not be included by host code (a path, a library the recording does not model), or "".
std::string hostIncludeRefusal(const std::string& source);

}  // namespace cuset::detail
