#include "host_build.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <future>
#include <optional>
#include <nlohmann/json.hpp>
#include <regex>

#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/subprocess.hpp"
#include "cuset/common/resources.hpp"
#include "cuset/evaluator/candidate/source_policy.hpp"
#include "cuset/evaluator/compile/compiler_log.hpp"

namespace fs = std::filesystem;

namespace cuset::detail {
namespace {

// The C and C++ standard library, which host code may use freely.
constexpr auto kStandardHeaders = std::to_array<std::string_view>(
    {"algorithm",        "array",    "atomic",      "bitset",        "cassert",       "cctype",   "cfloat",   "chrono",    "climits",   "cmath",
     "complex",          "cstddef",  "cstdint",     "cstdio",        "cstdlib",       "cstring",  "ctime",    "deque",     "exception", "functional",
     "initializer_list", "iomanip",  "iostream",    "iterator",      "limits",        "list",     "map",      "memory",    "mutex",     "numeric",
     "optional",         "ostream",  "queue",       "random",        "set",           "sstream",  "stack",    "stdexcept", "string",    "string_view",
     "thread",           "tuple",    "type_traits", "unordered_map", "unordered_set", "utility",  "variant",  "vector",    "math.h",    "stdio.h",
     "stdlib.h",         "string.h", "stdint.h",    "float.h",       "limits.h",      "assert.h", "stddef.h", "time.h"});

bool standInHeader(std::string_view h) {
  for (std::string_view prefix : {"torch/", "ATen/", "c10/", "pybind11/", "THC/"}) {
    if (h.starts_with(prefix) && h.find("..") == std::string_view::npos) return true;
  }
  return h == "cuda_runtime.h" || h == "cuda_runtime_api.h" || h == "cuda.h" || h == "device_launch_parameters.h" || h == "cublas_v2.h";
}

// g++'s first error names the torch stand-in: the host code uses API the recording lacks.
bool standInGap(const std::string& log) {
  const std::string first = firstErrorLine(log);
  static const std::regex kGap(
      R"((cuset_kb|cuset:|torch::|at::|c10::|pybind11|is not a member of [^\w\s]+(torch|at|c10)[^\w\s]|\b(cuda|cublas|cublasLt|cudnn|cufft|curand|cusparse|cusolver|nccl)[A-Z_]\w*[^\w\s]* was not declared))");
  return std::regex_search(first, kGap);
}

// Names torch/extension.h and torch/types.h do not declare, with the header that does (the stand-in
// mirrors each: shim/include/c10/cuda, ATen/cuda, cuda_runtime.h). Host code that uses one without
// including it fails load_inline's build as it fails here.
std::string_view headerDeclaring(std::string_view name) {
  static const std::array<std::pair<std::string_view, std::string_view>, 13> kNames = {{
      {"C10_CUDA_KERNEL_LAUNCH_CHECK", "<c10/cuda/CUDAException.h>"},
      {"C10_CUDA_CHECK", "<c10/cuda/CUDAException.h>"},
      {"AT_CUDA_CHECK", "<ATen/cuda/Exceptions.h>"},
      {"getCurrentCUDAStream", "<c10/cuda/CUDAStream.h> (or <ATen/cuda/CUDAContext.h>)"},
      {"getDefaultCUDAStream", "<c10/cuda/CUDAStream.h> (or <ATen/cuda/CUDAContext.h>)"},
      {"getStreamFromPool", "<c10/cuda/CUDAStream.h> (or <ATen/cuda/CUDAContext.h>)"},
      {"CUDAStream", "<c10/cuda/CUDAStream.h> (or <ATen/cuda/CUDAContext.h>)"},
      {"CUDAGuard", "<c10/cuda/CUDAGuard.h>"},
      {"OptionalCUDAGuard", "<c10/cuda/CUDAGuard.h>"},
      {"CUDAStreamGuard", "<c10/cuda/CUDAGuard.h>"},
      {"getCurrentDeviceProperties", "<ATen/cuda/CUDAContext.h>"},
      {"cudaStream_t", "<cuda_runtime.h>"},
      {"cudaGetLastError", "<cuda_runtime.h>"},
  }};
  for (const auto& [n, header] : kNames) {
    if (n == name) return header;
  }
  if (name.starts_with("cuda") && name.size() > 4 && std::isupper(static_cast<unsigned char>(name[4]))) return "<cuda_runtime.h>";
  return {};
}

// The first error's name when it is one torch's CUDA headers declare and the source does not include.
std::string missingHeaderNote(const std::string& log) {
  static const std::regex kMissing(
      R"([^\w\s]+(\w+)[^\w\s]+ (?:in namespace \S+ )?(was not declared in this scope|is not a member of|does not name a type|has not been declared))");
  std::smatch m;
  const std::string first = firstErrorLine(log);
  if (!std::regex_search(first, m, kMissing)) return {};
  const std::string_view header = headerDeclaring(m[1].str());
  if (header.empty()) return {};
  // cuda_sources always has <cuda_runtime.h> (load_inline prepends it): a runtime name missing there
  // is not this case.
  if (header == "<cuda_runtime.h>" && first.starts_with("cuda_sources")) return {};
  return fmt::format(
      " ('{}' is declared by {}, which this source does not include: torch/extension.h includes no CUDA header, so "
      "load_inline's build fails here too)",
      m[1].str(), header);
}

// A name the host code uses that its translation unit never declares fails load_inline's build too:
// g++ compiles cpp_sources and nvcc cuda_sources apart, and links them after.
std::string undeclaredNote(const std::string& log, const Extension& extension, const std::string& hostCuda) {
  static const std::regex kUndeclared(R"(^(cpp_sources|cuda_sources):\d+:\d+: error: [^\w\s]+(\w+)[^\w\s]+ was not declared in this scope)",
                                      std::regex::multiline);
  std::smatch m;
  const std::string first = firstErrorLine(log);
  if (!std::regex_search(first, m, kUndeclared)) return {};
  const std::string name = m[2].str();
  // A CUDA library's API (cublasGemmEx, cudaGraphLaunch) exists under load_inline: the stand-in lacks it.
  static const std::regex kCudaLibrary(R"(^(cuda|cublas|cublasLt|cudnn|cufft|curand|cusparse|cusolver|nccl)[A-Z_]\w*$)");
  if (std::regex_match(name, kCudaLibrary)) return {};
  const bool inCpp = m[1].str() == "cpp_sources";
  const std::regex word("\\b" + name + "\\b");
  const std::string& other = inCpp ? hostCuda : extension.cppSources;
  if (std::regex_search(other, word)) {
    return fmt::format(" ('{}' is only in {}, which load_inline compiles apart from {})", name, inCpp ? "cuda_sources" : "cpp_sources",
                       inCpp ? "cpp_sources" : "cuda_sources");
  }
  return fmt::format(" ('{}' is declared in neither source)", name);
}

// Whether torch's real headers refuse `source` too, as load_inline's build would: the translation unit
// as load_inline makes it (its prepended includes; the splitter's host half of cuda_sources, with the
// recorder's Launch for its rewritten launches), compiled with -fsyntax-only against the project's
// torch. Refused means: at the same line as the stand-in's first error (`line`, "cuda_sources:35"), so a
// difference between the two preludes never passes for the solution's error. nullopt when the headers
// are not there to ask (an installed cuset without torch's headers).
std::optional<bool> realHeadersRefuse(const std::string& source, bool cudaSources, const std::string& line, const fs::path& folder,
                                      std::chrono::milliseconds timeout) {
  const Resources& files = resources();
  const fs::path torch = files.pathIfAny("torch_include"), python = files.pathIfAny("python_include");
  std::error_code ec;
  if (!fs::exists(torch / "torch" / "extension.h", ec) || !fs::exists(python / "Python.h", ec)) return std::nullopt;
  const std::string shim = files.path("kb_standin_include").string();
  const std::string prelude = cudaSources ? "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n#include \"" + shim +
                                                "/cuset_kb/nvcc_host.hpp\"\n#include \"" + shim + "/cuset_kb/launch.hpp\"\n"
                                          : std::string("#include <torch/extension.h>\n");
  const fs::path file = folder / (cudaSources ? "real-cuda.cpp" : "real-main.cpp");
  writeFileAtomic(file, prelude + "#line 1 \"" + (cudaSources ? "cuda_sources" : "cpp_sources") + "\"\n" + source);
  const SubprocessResult r = runSubprocess(
      {files.path("cxx").string(), "-std=gnu++20", "-fsyntax-only", "-w", "-fmax-errors=1", "-I" + torch.string(),
       "-I" + (torch / "torch" / "csrc" / "api" / "include").string(), "-I" + python.string(), "-I" + files.path("cuda_include").string(),
       "-DTORCH_API_INCLUDE_EXTENSION_H", "-DTORCH_EXTENSION_NAME=cuset_check", file.string()},
      timeout);
  if (r.timedOut) return std::nullopt;
  return !r.ok() && firstErrorLine(r.output).starts_with(line + ":");
}

}  // namespace

std::string hostIncludeRefusal(const std::string& source) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*([<"])([^>"]*)[>"])", std::regex::multiline);
  for (auto it = std::sregex_iterator(source.begin(), source.end(), kInclude); it != std::sregex_iterator(); ++it) {
    const std::string header = (*it)[2].str();
    if ((*it)[1].str() == "\"")
      return fmt::format("host code includes \"{}\": only <...> headers of the C++ library, torch and CUDA are allowed", header);
    if (std::find(kStandardHeaders.begin(), kStandardHeaders.end(), header) != kStandardHeaders.end()) continue;
    if (standInHeader(header) || isAllowedHeader(header)) continue;
    return fmt::format(
        "unsupported:host code includes <{}>, a library the recording does not model (cuDNN, Thrust and CUB's "
        "device-wide calls run on the host; of cuBLAS, <cublas_v2.h>'s single-precision GEMMs are)",
        header);
  }
  return {};
}

namespace {

std::vector<std::string> compileFlags() {
  const Resources& r = resources();
  return {r.path("cxx").string(),
          "-std=gnu++20",
          "-fPIC",
          "-O0",
          "-w",
          "-fmax-errors=5",
          "-I" + r.path("kb_standin_include").string(),
          "-I" + r.path("cuda_include").string()};
}

}  // namespace

HostBuild compileHostLibrary(const Extension& extension, const std::string& hostCuda, const fs::path& folder, std::chrono::milliseconds timeout,
                             const fs::path& pch);

fs::path HostBuildCache::precompiledHeader(std::chrono::milliseconds timeout) {
  std::lock_guard lock(mutex_);
  if (pch_) return *pch_;
  // Parsing the stand-in's headers (torch's API, CUDA's half types) is most of a host build: about
  // 1.5 s of 2.2 per translation unit here; the precompiled header takes that to a load.
  const fs::path folder = root_ / ("host-pch-" + digest_.substr(0, 16));
  const fs::path header = folder / "cuset_kb_pch.hpp";
  constexpr std::string_view kSource = "#pragma once\n#include <torch/extension.h>\n";
  pch_ = fs::path();
  try {
    if (!fs::exists(fs::path(header.string() + ".gch"))) {
      fs::create_directories(folder);
      const ScratchDir work(folder);
      writeFileAtomic(work.path() / "cuset_kb_pch.hpp", kSource);
      std::vector<std::string> argv = compileFlags();
      argv.insert(argv.end(),
                  {"-x", "c++-header", (work.path() / "cuset_kb_pch.hpp").string(), "-o", (work.path() / "cuset_kb_pch.hpp.gch").string()});
      if (!runSubprocess(argv, timeout).ok()) return *pch_;
      // Several processes may race here; the header goes in last, so a .gch beside it is whole.
      fs::rename(work.path() / "cuset_kb_pch.hpp.gch", fs::path(header.string() + ".gch"));
      writeFileAtomic(header, kSource);
    } else if (!fs::exists(header)) {
      writeFileAtomic(header, kSource);
    }
    pch_ = header;
  } catch (const std::exception&) {
  }
  return *pch_;
}

HostBuild buildHostLibrary(const Extension& extension, const std::string& hostCuda, const fs::path& folder, std::chrono::milliseconds timeout,
                           HostBuildCache* cache) {
  HostBuild b;
  for (const std::string* text : {&extension.cppSources, &hostCuda}) {
    if (std::string why = hostIncludeRefusal(*text); !why.empty()) {
      b.verdict = why.starts_with("unsupported:") ? Verdict::unsupported : Verdict::invalid_submission;
      b.reason = why.starts_with("unsupported:") ? why.substr(12) : why;
      return b;
    }
    // File-scope assembly (.incbin) would read files of this machine into the build.
    static const std::regex kAsm(R"(\b(__asm__|__asm|asm)\b|incbin)");
    if (std::regex_search(*text, kAsm)) {
      b.verdict = Verdict::invalid_submission;
      b.reason = "host code contains inline assembly";
      return b;
    }
  }
  fs::create_directories(folder);
  b.library = folder / "extension.so";
  // The same sources built before (another problem, a re-run): the library or the failure is reused.
  fs::path cached;
  if (cache) {
    ContentHasher h;
    h.add(cache->digest()).add(extension.cppSources).add(hostCuda);
    for (const auto& f : extension.functions) h.add(f);
    cached = cache->root() / "host-builds" / h.digest().hex();
    std::error_code ec;
    if (fs::exists(cached / "extension.so")) {
      fs::copy_file(cached / "extension.so", b.library, fs::copy_options::overwrite_existing, ec);
      if (!ec) return b;
    } else if (fs::exists(cached / "failure.json")) {
      const nlohmann::json f = readJsonFile(cached / "failure.json");
      b.verdict = parseVerdict(f.at("verdict").get<std::string>());
      b.reason = f.at("reason");
      b.log = f.at("log");
      if (b.verdict) return b;
      b = HostBuild();  // written by another version: built again
    }
  }
  b = compileHostLibrary(extension, hostCuda, folder, timeout, cache ? cache->precompiledHeader(timeout) : fs::path());
  if (!cached.empty() && !b.ok() && !b.reason.starts_with("the host code did not compile within")) {
    fs::create_directories(cached);
    writeFileAtomic(cached / "failure.json", nlohmann::json{{"verdict", verdictName(*b.verdict)}, {"reason", b.reason}, {"log", b.log}}.dump());
  } else if (!cached.empty() && b.ok()) {
    fs::create_directories(cached);
    writeFileAtomic(cached / "extension.so", readFile(b.library));  // a racing process writes the same bytes
  }
  return b;
}

HostBuild compileHostLibrary(const Extension& extension, const std::string& hostCuda, const fs::path& folder, std::chrono::milliseconds timeout,
                             const fs::path& pch) {
  HostBuild b;
  // load_inline(functions=[...]) appends a PYBIND11_MODULE of its own to cpp_sources: a source that
  // defines one too has two definitions of the module's init function, and torch's build fails.
  static const std::regex kModule(R"(^[ \t]*PYBIND11_MODULE[ \t]*\()", std::regex::multiline);
  if (!extension.functions.empty() && (std::regex_search(extension.cppSources, kModule) || std::regex_search(extension.cudaSources, kModule))) {
    b.verdict = Verdict::compile_error;
    b.reason = "the source defines PYBIND11_MODULE and load_inline(functions=[...]) adds another: the module's init function is defined twice";
    return b;
  }
  std::string main = "#include <torch/extension.h>\n#line 1 \"cpp_sources\"\n" + extension.cppSources + "\n";
  if (!extension.functions.empty()) {
    main += "\nstatic ::cuset_kb::Registration cuset_kb_functions_([](::cuset_kb::Module& m) {\n";
    for (const auto& f : extension.functions) main += fmt::format("  m.def(\"{0}\", &{0});\n", f);
    main += "});\n";
  }
  writeFileAtomic(folder / "main.cpp", main);
  // load_inline prepends <torch/types.h>, <cuda.h> and <cuda_runtime.h> to cuda_sources (and
  // <torch/extension.h> to cpp_sources, above); nvcc gives its host code min/max; the splitter's
  // rewritten launches need the recorder's Launch.
  writeFileAtomic(folder / "cuda.cpp",
                  "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n#include <cuset_kb/nvcc_host.hpp>\n"
                  "#include <cuset_kb/launch.hpp>\n#line 1 \"cuda_sources\"\n" +
                      hostCuda);
  b.library = folder / "extension.so";
  // The two sources are two translation units, as under load_inline (g++ for cpp_sources, nvcc for
  // cuda_sources), compiled side by side. The precompiled stand-in header goes first in both; it
  // declares what torch/extension.h declares and no CUDA name: those come only with the CUDA headers
  // a source includes (C10_CUDA_KERNEL_LAUNCH_CHECK with <c10/cuda/CUDAException.h>, as under nvcc +
  // torch; tests/kernelbench/header_declarations.py compares the two).
  auto compile = [&](const char* unit) {
    std::vector<std::string> argv = compileFlags();
    if (!pch.empty()) argv.insert(argv.end(), {"-include", pch.string()});
    argv.insert(argv.end(), {"-c", (folder / unit).string(), "-o", (folder / unit).string() + ".o"});
    return runSubprocess(argv, timeout);
  };
  auto cudaUnit = std::async(std::launch::async, compile, "cuda.cpp");
  SubprocessResult run = compile("main.cpp");
  const SubprocessResult cudaRun = cudaUnit.get();
  if (run.ok() && !cudaRun.ok()) run = cudaRun;
  if (run.ok()) {
    // The recorder's process holds torch, which loads the real CUDA runtime with RTLD_GLOBAL: a name the
    // host code calls would bind to that library before the stand-in linked into its own. -Bsymbolic
    // binds every call to the stand-in when linking, and --no-undefined makes a call to anything else (a
    // CUDA API the stand-in lacks) a link error here instead of a call into the real runtime.
    run = runSubprocess({resources().path("cxx").string(), "-shared", (folder / "main.cpp.o").string(), (folder / "cuda.cpp.o").string(),
                         resources().path("kb_standin_library").string(), "-Wl,-Bsymbolic", "-Wl,--no-undefined", "-o", b.library.string()},
                        timeout);
  }
  b.log = run.output;
  if (run.ok()) return b;
  if (run.timedOut) {
    b.verdict = Verdict::compile_error;
    b.reason = fmt::format("the host code did not compile within {} s", timeout.count() / 1000.0);
    return b;
  }
  // A function the host code calls that nothing here defines (a CUDA API the stand-in lacks) is the
  // recording's limit, as KernelBench's own build would have found it in the CUDA runtime.
  static const std::regex kUndefined("undefined reference to `([^'(]+)");
  if (std::smatch m; std::regex_search(b.log, m, kUndefined)) {
    b.verdict = Verdict::unsupported;
    b.reason = fmt::format("host code calls {}, which the recording does not model", m[1].str());
    return b;
  }
  // Code KernelBench's nvcc would reject is the model's compile error; code that only our stand-in of
  // torch cannot take is the recording's limit.
  // A name declared nowhere is the model's error even where g++ suggests one of the stand-in's
  // ("did you mean 'at::conv2d'?").
  std::string undeclared = missingHeaderNote(b.log);
  if (undeclared.empty() && firstErrorLine(b.log).find("use of deleted function") != std::string::npos) {
    undeclared =
        " (host code calls a __device__ function: nvcc refuses it too, \"calling a __device__ function from a __host__ function is "
        "not allowed\")";
  }
  if (undeclared.empty()) undeclared = undeclaredNote(b.log, extension, hostCuda);
  b.verdict = undeclared.empty() && standInGap(b.log) ? Verdict::unsupported : Verdict::compile_error;
  if (b.verdict == Verdict::unsupported) {
    // Ask torch's real headers: what they refuse too is the solution's compile error, as on a GPU
    // (a TensorOptions has no sizes() there either); only what they accept is the stand-in's gap.
    const std::string first = firstErrorLine(b.log);
    const bool inCuda = first.starts_with("cuda_sources");
    const std::string line = first.substr(0, first.find(':', first.find(':') + 1));  // "cuda_sources:35"
    if (realHeadersRefuse(inCuda ? hostCuda : extension.cppSources, inCuda, line, folder, timeout).value_or(false)) {
      b.verdict = Verdict::compile_error;
      undeclared = " (torch's own headers refuse it too: load_inline's build fails there)";
    }
  }
  b.reason = b.verdict == Verdict::unsupported
                 ? "the host code uses torch or CUDA API the recording's stand-in does not have: " + firstErrorLine(b.log)
                 : "host code: " + firstErrorLine(b.log) + undeclared;
  return b;
}

}  // namespace cuset::detail
