#include "cuset/evaluator/pipeline/run_environment.hpp"

#include <sys/utsname.h>

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

#include "cuset/common/file_util.hpp"
#include "cuset/common/version.hpp"
#include "cuset/evaluator/compile/nvrtc_compiler.hpp"
#include "cuset/evaluator/compile/nvrtc_prelude.hpp"
#include "cuset/evaluator/problem/torch_reference.hpp"

#ifndef CUSET_CUDA_TOOLKIT_VERSION
#define CUSET_CUDA_TOOLKIT_VERSION "unknown"
#endif

namespace cuset {

nlohmann::json describeEnvironment() {
  utsname uts{};
  uname(&uts);
  return {
      {"cuset_version", kVersion},
      {"git_revision", gitRevision()},
      {"host", hostName()},
      {"os", std::string(uts.sysname) + " " + uts.release + " " + uts.machine},
      {"compiler", __VERSION__},
      {"cuda_toolkit", CUSET_CUDA_TOOLKIT_VERSION},
      {"nvrtc", NvrtcCompiler::nvrtcVersion()},
      {"nvrtc_prelude", std::string(nvrtcPreludeVersion())},
      {"libtorch", libtorchVersion()},
      {"gpu", nullptr},  // filled by the cuda backend when one is used
  };
}

}  // namespace cuset
