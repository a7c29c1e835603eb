#include "nvrtc_raw.hpp"

#include <utility>

#include "cuset/evaluator/compile/nvrtc_prelude.hpp"
#include "nvrtc_check.hpp"

namespace cuset::detail {
namespace {

// Owns an nvrtcProgram.
class NvrtcProgram {
 public:
  NvrtcProgram(std::string_view source, const char* name) {
    static const auto headers = [] {
      std::pair<std::vector<std::string>, std::vector<std::string>> h;
      for (const auto& v : nvrtcVirtualHeaders()) {
        h.first.emplace_back(v.name);
        h.second.emplace_back(v.content);
      }
      return h;
    }();
    std::vector<const char*> names, contents;
    for (std::size_t i = 0; i < headers.first.size(); ++i) {
      names.push_back(headers.first[i].c_str());
      contents.push_back(headers.second[i].c_str());
    }
    const std::string text(source);
    CUSET_NVRTC_CHECK(nvrtcCreateProgram(&program_, text.c_str(), name, static_cast<int>(names.size()), contents.data(), names.data()));
  }
  ~NvrtcProgram() {
    if (program_) nvrtcDestroyProgram(&program_);
  }
  NvrtcProgram(const NvrtcProgram&) = delete;
  NvrtcProgram& operator=(const NvrtcProgram&) = delete;
  nvrtcProgram get() const { return program_; }

  std::string log() const {
    std::size_t size = 0;
    CUSET_NVRTC_CHECK(nvrtcGetProgramLogSize(program_, &size));
    std::string text(size, '\0');
    CUSET_NVRTC_CHECK(nvrtcGetProgramLog(program_, text.data()));
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
    return text;
  }

 private:
  nvrtcProgram program_ = nullptr;
};

}  // namespace

RawCompile runNvrtc(std::string_view source, const std::vector<std::string>& options, const std::vector<std::string>& nameExpressions, bool cubin) {
  NvrtcProgram program(source, "candidate.cu");
  for (const auto& n : nameExpressions) CUSET_NVRTC_CHECK(nvrtcAddNameExpression(program.get(), n.c_str()));
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const nvrtcResult status = nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  RawCompile out;
  out.log = program.log();
  if (status == NVRTC_ERROR_COMPILATION) return out;
  CUSET_NVRTC_CHECK(status);
  out.ok = true;
  std::size_t size = 0;
  if (cubin) {
    CUSET_NVRTC_CHECK(nvrtcGetCUBINSize(program.get(), &size));
    out.image.resize(size);
    CUSET_NVRTC_CHECK(nvrtcGetCUBIN(program.get(), reinterpret_cast<char*>(out.image.data())));
  } else {
    CUSET_NVRTC_CHECK(nvrtcGetPTXSize(program.get(), &size));
    out.image.resize(size);
    CUSET_NVRTC_CHECK(nvrtcGetPTX(program.get(), reinterpret_cast<char*>(out.image.data())));
  }
  for (const auto& n : nameExpressions) {
    const char* lowered = nullptr;
    CUSET_NVRTC_CHECK(nvrtcGetLoweredName(program.get(), n.c_str(), &lowered));
    out.lowered[n] = lowered;
  }
  return out;
}

}  // namespace cuset::detail
