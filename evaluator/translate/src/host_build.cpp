#include "host_build.hpp"

#include <fmt/format.h>

#include <array>
#include <regex>

#include "cuset/common/file_util.hpp"
#include "cuset/common/subprocess.hpp"
#include "cuset/evaluator/candidate/source_policy.hpp"
#include "cuset/evaluator/compile/compiler_log.hpp"

namespace fs = std::filesystem;

namespace cuset::detail {
namespace {

// The C and C++ standard library, which host code may use freely.
constexpr auto kStandardHeaders = std::to_array<std::string_view>({
    "algorithm", "array", "atomic", "bitset", "cassert", "cctype", "cfloat", "chrono", "climits", "cmath", "complex", "cstddef",
    "cstdint", "cstdio", "cstdlib", "cstring", "ctime", "deque", "exception", "functional", "initializer_list", "iomanip", "iostream",
    "iterator", "limits", "list", "map", "memory", "mutex", "numeric", "optional", "ostream", "queue", "random", "set", "sstream", "stack",
    "stdexcept", "string", "string_view", "thread", "tuple", "type_traits", "unordered_map", "unordered_set", "utility", "variant",
    "vector", "math.h", "stdio.h", "stdlib.h", "string.h", "stdint.h", "float.h", "limits.h", "assert.h", "stddef.h", "time.h"});

bool standInHeader(std::string_view h) {
  for (std::string_view prefix : {"torch/", "ATen/", "c10/", "pybind11/", "THC/"}) {
    if (h.starts_with(prefix) && h.find("..") == std::string_view::npos) return true;
  }
  return h == "cuda_runtime.h" || h == "cuda_runtime_api.h" || h == "cuda.h";
}

// g++'s first error names the torch stand-in: the host code uses API the recording lacks.
bool standInGap(const std::string& log) {
  const std::string first = firstErrorLine(log);
  static const std::regex kGap(R"((cuset_kb|cuset:|torch::|at::|c10::|pybind11|\bcuda[A-Z]\w*.? was not declared))");
  return std::regex_search(first, kGap);
}

}  // namespace

std::string hostIncludeRefusal(const std::string& source) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*([<"])([^>"]*)[>"])", std::regex::multiline);
  for (auto it = std::sregex_iterator(source.begin(), source.end(), kInclude); it != std::sregex_iterator(); ++it) {
    const std::string header = (*it)[2].str();
    if ((*it)[1].str() == "\"") return fmt::format("host code includes \"{}\": only <...> headers of the C++ library, torch and CUDA are allowed", header);
    if (std::find(kStandardHeaders.begin(), kStandardHeaders.end(), header) != kStandardHeaders.end()) continue;
    if (standInHeader(header) || isAllowedHeader(header)) continue;
    return fmt::format("unsupported:host code includes <{}>, a library the recording does not model (cuBLAS, cuDNN, Thrust and CUB's "
                       "device-wide calls run on the host)", header);
  }
  return {};
}

HostBuild buildHostLibrary(const Extension& extension, const std::string& hostCuda, const fs::path& folder, std::chrono::milliseconds timeout) {
  HostBuild b;
  for (const std::string* text : {&extension.cppSources, &hostCuda}) {
    if (std::string why = hostIncludeRefusal(*text); !why.empty()) {
      b.verdict = why.starts_with("unsupported:") ? "unsupported" : "invalid_submission";
      b.reason = why.starts_with("unsupported:") ? why.substr(12) : why;
      return b;
    }
    // File-scope assembly (.incbin) would read files of this machine into the build.
    static const std::regex kAsm(R"(\b(__asm__|__asm|asm)\b|incbin)");
    if (std::regex_search(*text, kAsm)) {
      b.verdict = "invalid_submission";
      b.reason = "host code contains inline assembly";
      return b;
    }
  }
  fs::create_directories(folder);
  std::string main = "#include <torch/extension.h>\n#line 1 \"cpp_sources\"\n" + extension.cppSources + "\n";
  if (!extension.functions.empty()) {
    main += "\nstatic ::cuset_kb::Registration cuset_kb_functions_([](::cuset_kb::Module& m) {\n";
    for (const auto& f : extension.functions) main += fmt::format("  m.def(\"{0}\", &{0});\n", f);
    main += "});\n";
  }
  writeFileAtomic(folder / "main.cpp", main);
  // nvcc includes cuda_runtime.h in every .cu file.
  writeFileAtomic(folder / "cuda.cpp", "#include <cuda_runtime.h>\n#line 1 \"cuda_sources\"\n" + hostCuda);
  b.library = folder / "extension.so";
  // The recorder's process holds torch, which loads the real CUDA runtime with RTLD_GLOBAL: a name the
  // host code calls would bind to that library before the stand-in linked into its own. -Bsymbolic binds
  // every call to the stand-in when linking, and --no-undefined makes a call to anything else (a CUDA
  // API the stand-in lacks) a link error here instead of a call into the real runtime.
  const std::vector<std::string> argv = {CUSET_TRANSLATE_CXX, "-std=gnu++20", "-shared", "-fPIC", "-O0", "-w", "-fmax-errors=5",
                                         "-I" + std::string(CUSET_TRANSLATE_SHIM_INCLUDE), "-I" + std::string(CUSET_TRANSLATE_CUDA_INCLUDE),
                                         (folder / "main.cpp").string(), (folder / "cuda.cpp").string(), CUSET_TRANSLATE_SHIM_LIBRARY,
                                         "-Wl,-Bsymbolic", "-Wl,--no-undefined", "-o", b.library.string()};
  const SubprocessResult run = runSubprocess(argv, timeout);
  b.log = run.output;
  if (run.ok()) return b;
  if (run.timedOut) {
    b.verdict = "compile_error";
    b.reason = fmt::format("the host code did not compile within {} s", timeout.count() / 1000.0);
    return b;
  }
  // A function the host code calls that nothing here defines (a CUDA API the stand-in lacks) is the
  // recording's limit, as KernelBench's own build would have found it in the CUDA runtime.
  static const std::regex kUndefined("undefined reference to `([^'(]+)");
  if (std::smatch m; std::regex_search(b.log, m, kUndefined)) {
    b.verdict = "unsupported";
    b.reason = fmt::format("host code calls {}, which the recording does not model", m[1].str());
    return b;
  }
  // Code KernelBench's nvcc would reject is the model's compile error; code that only our stand-in of
  // torch cannot take is the recording's limit.
  b.verdict = standInGap(b.log) ? "unsupported" : "compile_error";
  b.reason = b.verdict == "unsupported" ? "the host code uses torch API the recording's stand-in does not have: " + firstErrorLine(b.log)
                                        : "host code: " + firstErrorLine(b.log);
  return b;
}

}  // namespace cuset::detail
