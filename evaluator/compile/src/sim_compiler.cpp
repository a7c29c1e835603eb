#include "cuset/evaluator/compile/sim_compiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <regex>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/subprocess.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/resources.hpp"
#include "cuset/evaluator/compile/cubin_symbols.hpp"
#include "cuset/evaluator/compile/dynamic_symbols.hpp"
#include "cuset/evaluator/compile/load_time_code.hpp"
#include "cuset/evaluator/compile/sim_inline_ptx.hpp"
#include "prelude_pch.hpp"
#include "source_scan.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

fs::path fromEnv(const char* name, const fs::path& fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? fs::path(v) : fallback;
}

// Marks a cached failure that is a refusal of the source rather than a compiler error.
constexpr std::string_view kRejected = "cuset: refused: ";

// -O1: the suite's small sizes run in milliseconds, so compile time dominates; -fno-strict-aliasing
// because CUDA code reinterprets buffers (float4 loads over float arrays) as nvcc allows;
// -fsanitize=alignment because a GPU faults on a misaligned access (a float4 load 4 bytes off 16)
// that an x86 CPU performs: the check calls libcuset_sim's handler (alignment_check.cpp), which ends
// the launch as the GPU would; FMA contraction because NVRTC contracts. The precompiled prelude is
// built with exactly these.
std::vector<std::string> codegenFlags(const SimCodegen& options, bool instrumentLoads, bool sharedAccesses) {
  std::vector<std::string> flags = {"-std=c++20", options.optimization, "-fPIC", "-w", "-fno-strict-aliasing", "-fno-math-errno"};
  if (options.alignmentCheck) flags.insert(flags.end(), {"-fsanitize=alignment", "-fno-sanitize-recover=alignment"});
  // GCC fuses only from -fexpensive-optimizations (on at -O2, off at -O1) and only with FMA enabled.
  if (options.contractFma && __builtin_cpu_supports("fma")) flags.insert(flags.end(), {"-mfma", "-ffp-contract=fast", "-fexpensive-optimizations"});
  // One call per load to the prelude's __asan_loadN_noabort (tail_reads.cpp): the kernel flavour of
  // the address sanitizer needs no shadow memory, runtime or constructor in call mode; stack and
  // globals are left out (no buffer tail lies there) and stores too (the guard comparison sees them).
  if (instrumentLoads || sharedAccesses) {
    flags.insert(flags.end(), {"-fsanitize=kernel-address", "--param=asan-instrumentation-with-call-threshold=0", "--param=asan-stack=0",
                               "--param=asan-globals=0", "--param=asan-use-after-return=0"});
    flags.push_back(sharedAccesses ? "--param=asan-instrument-writes=1" : "--param=asan-instrument-writes=0");
    // Line tables (not full debug info): a named race says which lines made the two accesses.
    if (sharedAccesses) flags.insert(flags.end(), {"-DCUSET_SIM_SHARED_ACCESSES", "-g1"});
  }
  return flags;
}
// The default libraries without the sanitizer's runtime, which the compiler driver would add for
// -fsanitize (libcuset_sim handles the checks, and the sandbox lets the library load nothing else).
const std::vector<std::string> kLinkLibraries = {"-nodefaultlibs", "-lstdc++", "-lm", "-lgcc_s", "-lgcc", "-lc"};
// The shared ones by soname prefix, as libcuset_sim.so names them in DT_NEEDED: the loader finds them
// through it when a candidate's library was linked against libcuset_sim.so alone.
const std::vector<std::string_view> kRuntimeSonames = {"libstdc++.so.", "libm.so.", "libgcc_s.so.", "libc.so."};

// GNU gold where binutils has it: it links a candidate library in ~55 ms where ld.bfd takes ~90, a
// sixth of a whole host build (bench_sim host_build).
std::optional<std::string> fasterLinker() {
  static const std::optional<std::string> flag = []() -> std::optional<std::string> {
    const char* path = std::getenv("PATH");
    for (std::string_view rest = path ? path : "/usr/bin"; !rest.empty();) {
      const std::size_t colon = std::min(rest.find(':'), rest.size());
      if (colon > 0 && fs::exists(fs::path(rest.substr(0, colon)) / "ld.gold")) return "-fuse-ld=gold";
      rest.remove_prefix(std::min(colon + 1, rest.size()));
    }
    return std::nullopt;
  }();
  return flag;
}

// Whether every reference the library leaves for the loader is to a symbol in `linkable`.
bool resolvesAtLoad(const fs::path& library, const std::unordered_set<std::string>& linkable) {
  const auto symbols = readDynamicSymbols(readBinaryFile(library));
  return symbols && std::all_of(symbols->undefined.begin(), symbols->undefined.end(), [&](const std::string& s) { return linkable.contains(s); });
}

using detail::braceDepthAt;
using detail::lineAt;

}  // namespace

SimToolchain SimToolchain::fromBuild() {
  const Resources& r = resources();
  return SimToolchain{fromEnv("CUSET_SIM_CXX", r.path("cxx")), fromEnv("CUSET_SIM_INCLUDE", r.path("sim_include")),
                      fromEnv("CUSET_CUDA_INCLUDE", r.path("cuda_include")), fromEnv("CUSET_SIM_LIBDIR", r.path("sim_library_dir"))};
}

namespace {

// `source` with each match of `declaration` replaced by what `rewrite(match, position)` gives, or kept
// where it gives nothing.
template <class Rewrite>
std::string rewriteEach(std::string_view source, const std::regex& declaration, Rewrite rewrite) {
  const std::string text(source);
  std::string out;
  std::size_t last = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), declaration); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    const std::size_t pos = static_cast<std::size_t>(m.position());
    std::optional<std::string> replacement = rewrite(text, m, pos);
    if (!replacement) continue;
    out.append(text, last, pos - last);
    out += *replacement;
    last = pos + static_cast<std::size_t>(m.length());
  }
  out.append(text, last, std::string::npos);
  return out;
}

}  // namespace

std::string rewriteDynamicShared(std::string_view source) {
  static const std::regex kDecl(
      R"(extern\s+__shared__\s+((?:__align__\s*\(\s*\d+\s*\)\s*|alignas\s*\(\s*\d+\s*\)\s*)*)([A-Za-z_][\w:<>,\s]*?[\w>])\s*((?:__align__\s*\(\s*\d+\s*\)\s*)*)\s*\b([A-Za-z_]\w*)\s*\[\s*\]\s*;)");
  return rewriteEach(source, kDecl, [](const std::string& text, const std::smatch& m, std::size_t pos) -> std::optional<std::string> {
    const std::string type = m[2].str();
    const std::string name = m[4].str();
    // Inside a function: a local pointer, on the same line so line numbers stay right.
    if (braceDepthAt(text, pos) > 0) return fmt::format("{0}* const {1} = reinterpret_cast<{0}*>(__cuset_dynamic_shared());", type, name);
    // At namespace scope: a macro, since the pointer differs for each running block.
    return fmt::format("\n#undef {1}\n#define {1} (reinterpret_cast<{0}*>(__cuset_dynamic_shared()))\n#line {2}\n", type, name,
                       lineAt(text, pos + static_cast<std::size_t>(m.length())));
  });
}

std::string rewriteStaticSharedForAccessChecks(std::string_view source) {
  // `__shared__ float s[32];` inside a function: GCC's address sanitizer does not instrument accesses
  // to a thread_local (what the prelude makes __shared__), so the array gets another name and `s`
  // becomes a reference to it through a pointer the compiler cannot see through, whose accesses it
  // does instrument. One declarator without an initialiser; anything else keeps its form (unchecked).
  static const std::regex kDecl(
      R"((\bstatic\s+)?__shared__\s+((?:__align__\s*\(\s*\d+\s*\)\s*|alignas\s*\(\s*\d+\s*\)\s*)*)([A-Za-z_][\w:<>,\s]*?[\w>])\s+([A-Za-z_]\w*)\s*((?:\[[^\[\];{}=]+\]\s*)*);)");
  return rewriteEach(source, kDecl, [](const std::string& text, const std::smatch& m, std::size_t pos) -> std::optional<std::string> {
    if (braceDepthAt(text, pos) == 0) return std::nullopt;
    const std::string name = m[4].str();
    // On one line, so line numbers stay right.
    return fmt::format("__shared__ {}{} {}__cuset_storage{}; auto& {} = *::cuset_sim::opaque(&{}__cuset_storage);", m[2].str(), m[3].str(), name,
                       m[5].str(), name, name);
  });
}

bool simNeedsFibers(std::string_view source) {
  for (std::string_view marker : {"__syncthreads", "__syncwarp", "_sync(", "_sync (", "__activemask", "cooperative_groups", "this_thread_block",
                                  "tiled_partition", ".sync()", "barrier", "memcpy_async", "wait_prior"}) {
    if (source.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

std::string withoutStaticOfShared(std::string_view source) {
  // nvcc takes `static __shared__ float s[32];` (a block's shared memory is static storage anyway); the
  // prelude's __shared__ is `static thread_local`, and GCC refuses a second `static`. On the same line.
  static const std::regex kStatic(R"(\bstatic[ \t]+(__shared__)\b|\b(__shared__)[ \t]+static\b)");
  // `extern __shared__ float s[256];` with a size: nvcc warns "extern declaration of the entity s is
  // treated as a static definition" and defines it; GCC refuses "conflicting specifiers" (extern with the
  // prelude's static). Without a size it is the dynamic array, which rewriteDynamicShared handles.
  static const std::regex kExternSized(R"(\bextern[ \t]+(__shared__[^;\[\]]*\[[ \t]*[^\]\s]))");
  return std::regex_replace(std::regex_replace(std::string(source), kStatic, "__shared__"), kExternSized, "$1");
}

std::string simTranslationUnit(std::string_view source, const std::vector<std::string>& kernelNames) {
  std::string tu = "#include \"cuset_sim/prelude.hpp\"\n#line 1 \"candidate.cu\"\n";
  tu += rewriteDynamicShared(withoutStaticOfShared(source));
  tu +=
      "\n#line 1 \"cuset_sim_entries\"\nextern \"C\" const ::cuset_sim::KernelEntry* cuset_sim_kernels(int* count) {\n"
      "  static const ::cuset_sim::KernelEntry table[] = {\n";
  for (const auto& name : kernelNames) tu += fmt::format("    ::cuset_sim::entry<&{}>(\"{}\"),\n", name, name);
  tu += fmt::format("  }};\n  *count = {};\n  return table;\n}}\n", kernelNames.size());
  return tu;
}

fs::path SimCompilerOptions::defaultPreludePchDir() { return defaultCacheDir() / "sim-pch"; }

SimCompiler::SimCompiler(SimToolchain toolchain, fs::path cacheDir, SimCompilerOptions options)
    : toolchain_(std::move(toolchain)), cacheDir_(std::move(cacheDir)), options_(std::move(options)) {
  if (!fs::exists(toolchain_.simInclude / "cuset_sim" / "prelude.hpp")) {
    throw makeError("simulator headers not found in {} (set CUSET_SIM_INCLUDE)", toolchain_.simInclude.string());
  }
  if (!fs::exists(toolchain_.simLibraryDir / "libcuset_sim.so")) {
    throw makeError("libcuset_sim.so not found in {} (build the cuset_sim target, or set CUSET_SIM_LIBDIR)", toolchain_.simLibraryDir.string());
  }
  fs::create_directories(cacheDir_);
  // Every header the host build may take from the simulator, in a stable order: a change to any of
  // them (mma.h, cuda/barrier) must not reuse libraries built against the old one.
  std::vector<fs::path> headers;
  for (const auto& entry : fs::recursive_directory_iterator(toolchain_.simInclude)) {
    if (entry.is_regular_file()) headers.push_back(entry.path());
  }
  std::sort(headers.begin(), headers.end());
  ContentHasher h;
  for (const fs::path& header : headers) h.add(fs::relative(header, toolchain_.simInclude).string()).add(readFile(header));
  headersDigest_ = h.digest().hex();
}

std::string SimCompiler::loadTimeCode(const fs::path& library) const {
  auto inspect = [](const fs::path& path) {
    auto code = inspectLoadTimeCode(readBinaryFile(path));
    if (!code) throw makeError("{}: {}", path.string(), code.error());
    return *code;
  };
  // The toolchain's own start-up code contributes entries too (crti's .init, frame_dummy); a library
  // built from an empty candidate tells how much.
  std::call_once(baselineOnce_, [&] {
    const SimCompileOutput empty = build("", {}, false, {});
    if (!empty.ok) throw makeError("the simulator cannot build an empty library: {}", empty.log);
    baseline_ = inspect(empty.library);
  });
  return extraLoadTimeCode(inspect(library), baseline_);
}

bool SimCompiler::instrumentsLoads(SimBuildChecks checks) const { return checks.tailReads && options_.codegen.tailReadCheck; }

std::vector<std::string> SimCompiler::codeFlags(SimBuildChecks checks) const {
  return codegenFlags(options_.codegen, instrumentsLoads(checks), checks.sharedAccesses);
}

fs::path SimCompiler::preludePchDir(SimBuildChecks checks) const {
  PreludeVariant& variant = preludes_[checks.sharedAccesses ? 2 : instrumentsLoads(checks) ? 1 : 0];
  std::call_once(variant.once, [&] {
    if (options_.pchDir.empty()) return;
    std::string whyNot;
    if (auto pch = detail::ensurePreludePch(toolchain_, codeFlags(checks), options_.pchDir, options_.timeout, whyNot)) {
      variant.include = pch->includeDir;
    } else {
      log::warn("simulator builds will parse the prelude from source (slower): {}", whyNot);
    }
  });
  return variant.include;
}

const std::unordered_set<std::string>* SimCompiler::linkableSymbols() const {
  std::call_once(linkableOnce_, [&] {
    std::unordered_set<std::string> symbols;
    auto read = [&](const fs::path& library) -> std::optional<DynamicSymbols> {
      std::error_code ec;
      if (!fs::is_regular_file(library, ec)) return std::nullopt;
      auto dynamic = readDynamicSymbols(readBinaryFile(library));
      if (!dynamic) return std::nullopt;
      symbols.insert(dynamic->defined.begin(), dynamic->defined.end());
      return std::move(*dynamic);
    };
    const auto sim = read(toolchain_.simLibraryDir / "libcuset_sim.so");
    if (!sim) return;
    std::size_t runtimes = 0;
    for (const std::string& soname : sim->needed) {
      if (std::none_of(kRuntimeSonames.begin(), kRuntimeSonames.end(), [&](std::string_view p) { return soname.starts_with(p); })) continue;
      // Where the compiler's linker would find it (the answer is the bare name when it would not).
      const SubprocessResult r = runSubprocess({toolchain_.compiler.string(), "-print-file-name=" + soname}, options_.timeout);
      std::string path = r.output;
      while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
      if (!r.ok() || !fs::path(path).is_absolute() || !read(path)) return;
      ++runtimes;
    }
    if (runtimes == kRuntimeSonames.size()) linkable_ = std::move(symbols);
  });
  return linkable_ ? &*linkable_ : nullptr;
}

std::vector<std::string> SimCompiler::buildCommand(const fs::path& source, const fs::path& output, Link link, SimBuildChecks checks) const {
  std::vector<std::string> argv = {toolchain_.compiler.string()};
  const std::vector<std::string> flags = codeFlags(checks);
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("-shared");
  // The process that loads the library (a sandboxed worker) holds LibTorch, whose libtorch_cpu.so
  // exports BLAS names (saxpy, sgemm, daxpy): a kernel declared `extern "C" saxpy` would be bound to
  // LibTorch's routine through the global scope and the simulator would call it. -Bsymbolic binds
  // every name the library defines to its own definition.
  argv.push_back("-Wl,-Bsymbolic");
  if (const auto linker = fasterLinker()) argv.push_back(*linker);
  // First on the path, so `#include "cuset_sim/prelude.hpp"` finds the .gch before the header.
  if (const fs::path pch = preludePchDir(checks); !pch.empty()) argv.push_back("-I" + pch.string());
  argv.insert(argv.end(), {"-I" + toolchain_.simInclude.string(), "-I" + toolchain_.cudaInclude.string()});
  // libcu++ (`cuda/std/...`) is host code too; CUDA 13 keeps it under include/cccl.
  if (fs::exists(toolchain_.cudaInclude / "cccl" / "cuda" / "std")) argv.push_back("-I" + (toolchain_.cudaInclude / "cccl").string());
  argv.insert(argv.end(), {source.string(), "-o", output.string(), "-L" + toolchain_.simLibraryDir.string(), "-lcuset_sim",
                           "-Wl,-rpath," + toolchain_.simLibraryDir.string()});
  if (link == Link::full) {
    argv.push_back("-Wl,--no-undefined");
    argv.insert(argv.end(), kLinkLibraries.begin(), kLinkLibraries.end());
  } else {
    argv.insert(argv.end(), {"-nodefaultlibs", "-lgcc"});  // libgcc is static: its helpers (__popcountdi2) go into the library
  }
  return argv;
}

SimCompileOutput SimCompiler::compile(std::string_view source, const std::vector<std::string>& kernelNames, SimBuildChecks checks) const {
  return build(source, kernelNames, true, checks);
}

SimCompileOutput SimCompiler::build(std::string_view source, const std::vector<std::string>& kernelNames, bool checkInitializers,
                                    SimBuildChecks checks) const {
  const auto start = std::chrono::steady_clock::now();
  SimCompileOutput out;
  auto finish = [&] {
    out.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return out;
  };
  const InlinePtxRewrite ptx = rewriteInlinePtx(source);
  if (!ptx.unsupported.empty()) {
    out.unsupported = ptx.unsupported;
    return finish();
  }
  out.needsFibers = simNeedsFibers(source) || ptx.collectives;
  const std::string tu = simTranslationUnit(checks.sharedAccesses ? rewriteStaticSharedForAccessChecks(ptx.source) : ptx.source, kernelNames);

  ContentHasher h;
  h.add("cuset-sim-v4").add(toolchain_.compiler.string()).add(tu).add(headersDigest_);
  for (const auto& flag : codeFlags(checks)) h.add(flag);
  out.tailReadsChecked = instrumentsLoads(checks);
  const std::string key = h.digest().hex();
  const fs::path library = cacheDir_ / (key + ".so");
  const fs::path failure = cacheDir_ / (key + ".log");
  if (fs::exists(library)) {
    out.ok = out.cacheHit = true;
    out.library = library;
    return finish();
  }
  if (fs::exists(failure)) {
    out.cacheHit = true;
    out.log = readFile(failure);
    if (out.log.rfind(kRejected, 0) == 0) out.rejection = out.log.substr(kRejected.size(), out.log.find('\n') - kRejected.size());
    return finish();
  }
  const fs::path source_path = cacheDir_ / (key + ".cpp");
  writeFileAtomic(source_path, tu);
  // Unique per call, not just per process: two jobs of one run may compile the same source at once
  // (a dataset repeats kernels), and each must link into its own file before the rename.
  static std::atomic<std::uint64_t> builds{0};
  const fs::path temporary = cacheDir_ / fmt::format("{}.{}.{}.tmp.so", key, ::getpid(), builds.fetch_add(1));
  const std::unordered_set<std::string>* linkable = linkableSymbols();
  SubprocessResult r = runSubprocess(buildCommand(source_path, temporary, linkable ? Link::runtimeChecked : Link::full, checks), options_.timeout);
  out.precompiledPrelude = !preludePchDir(checks).empty();
  if (r.ok() && linkable && !resolvesAtLoad(temporary, *linkable)) {
    // Something the loader would not find: the full link either takes it from a static part of the
    // runtimes (libc_nonshared.a's atexit) or reports it as the linker does.
    r = runSubprocess(buildCommand(source_path, temporary, Link::full, checks), options_.timeout);
  }
  out.log = r.output;
  if (r.timedOut) out.log += fmt::format("\nhost compiler timed out after {} s", options_.timeout.count() / 1000);
  std::string atLoad;
  if (r.ok() && checkInitializers) atLoad = loadTimeCode(temporary);
  if (!atLoad.empty()) {
    // Code that runs when the library is loaded would run before the kernel does, in the loader.
    out.rejection = fmt::format(
        "host code that runs when the kernel library is loaded ({}) is not allowed: it would run outside "
        "the kernel sandbox",
        atLoad);
    out.log = std::string(kRejected) + out.rejection + "\n" + out.log;
    std::error_code ec;
    fs::remove(temporary, ec);
    writeFileAtomic(failure, out.log);
  } else if (r.ok()) {
    // Another job may have built the same source meanwhile and handed its worker this very file:
    // the first library published stays (publishFileOnce), so that worker's sandbox can still read it.
    publishFileOnce(temporary, library);
    out.ok = true;
    out.library = library;
  } else {
    std::error_code ec;
    fs::remove(temporary, ec);
    if (!r.timedOut) writeFileAtomic(failure, out.log);
  }
  return finish();
}

}  // namespace cuset
