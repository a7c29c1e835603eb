#pragma once
// Builds a candidate into a shared library for the CPU simulator: the source (lightly rewritten for
// `extern __shared__`), the simulator prelude before it and one entry point per manifest kernel after
// it, compiled by the host C++ compiler and linked against libcuset_sim.so. Cached by content; the
// prelude itself is precompiled once per toolchain (a GCC .gch shared by every build, prelude_pch.cpp).
#include <array>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "cuset/evaluator/compile/load_time_code.hpp"

namespace cuset {

struct SimToolchain {
  std::filesystem::path compiler;       // host C++ compiler
  std::filesystem::path simInclude;     // evaluator/sim/runtime/include
  std::filesystem::path cudaInclude;    // toolkit headers compiled as host code (cuda_fp16.h, vector_types.h)
  std::filesystem::path simLibraryDir;  // folder of libcuset_sim.so
  // The build's own paths, overridable by $CUSET_SIM_CXX, $CUSET_SIM_INCLUDE, $CUSET_CUDA_INCLUDE and
  // $CUSET_SIM_LIBDIR.
  static SimToolchain fromBuild();
};

struct SimCompileOutput {
  bool ok = false;
  std::string log;                // the host compiler's messages
  std::filesystem::path library;  // the .so, when ok
  std::string rejection;          // non-empty: the source is refused (not a compiler failure)
  std::string unsupported;        // non-empty: valid CUDA the simulator cannot run (inline PTX it lacks)
  bool needsFibers = true;
  bool cacheHit = false;
  bool precompiledPrelude = false;  // built with the precompiled prelude (false on a cache hit)
  bool tailReadsChecked = false;    // loads instrumented for buffer tails (SimBuildChecks::tailReads)
  double milliseconds = 0.0;
};

// How the host compiler generates a candidate's code. The defaults are the build; the others exist
// only to measure what each choice costs (bench_sim, on one kernel and on the whole suite).
struct SimCodegen {
  // Misaligned accesses end the launch as a GPU's "misaligned address" does (-fsanitize=alignment with
  // libcuset_sim's handler). Off only to measure what the check costs.
  bool alignmentCheck = true;
  // a*b+c fused into one FMA, as NVRTC does by default (--fmad=true), where this CPU has FMA: results
  // that a tolerance judges round as the GPU's do. Off only to measure the difference.
  bool contractFma = true;
  // The host compiler's optimisation level: -O1 builds fastest for the suite's small sizes end to end
  // (docs/benchmarks.md); other levels only to measure that.
  std::string optimization = "-O1";
  // Loads instrumented, when a build asks for it (SimBuildChecks::tailReads), so that a read of the
  // bytes after an odd-sized buffer, inside its last 16-byte granule, ends the launch as
  // compute-sanitizer reports it (tail_reads.cpp). Off only to measure what it costs.
  bool tailReadCheck = true;
};

// What one build must be able to check, decided by the trial's layout.
struct SimBuildChecks {
  // Some buffer's size is not a multiple of 16 bytes, so its last granule has bytes no page fence covers.
  bool tailReads = false;
  // Every load and store handed to the runtime, for its race check or lockstep execution in shared
  // memory (cuset_sim::SharedAccesses); loads keep their tail check.
  bool sharedAccesses = false;
};

struct SimCompilerOptions {
  std::chrono::milliseconds timeout{120000};  // per host-compiler run
  // Where the precompiled prelude lives, shared by runs and keyed by toolchain and prelude content;
  // empty: compile the prelude from source in every build (for measuring, or a compiler without PCH).
  std::filesystem::path pchDir = defaultPreludePchDir();
  SimCodegen codegen;
  // defaultCacheDir()/sim-pch
  static std::filesystem::path defaultPreludePchDir();
};

class SimCompiler {
 public:
  // `cacheDir` holds the candidate libraries (and the failure logs) under their content hash.
  SimCompiler(SimToolchain toolchain, std::filesystem::path cacheDir, SimCompilerOptions options = {});
  // A source whose library would run code when loaded (constructors, code in .init, ifunc resolvers:
  // load_time_code.hpp) is refused: that code would run in the loader, before the kernel.
  SimCompileOutput compile(std::string_view source, const std::vector<std::string>& kernelNames, SimBuildChecks checks = {}) const;

  // How a candidate's library is linked. `runtimeChecked`: against libcuset_sim.so alone, with the
  // references it leaves checked against the symbols the loader will find (linkableSymbols); `full`:
  // also against the C and C++ runtimes, with the linker refusing anything undefined. Both give the
  // same library to the loader; the first skips reading the runtimes (a sixth of a host build).
  enum class Link { runtimeChecked, full };
  // The host compiler's command line for one translation unit (with the precompiled prelude once it
  // exists); exposed so tests can check the prelude really is taken precompiled.
  std::vector<std::string> buildCommand(const std::filesystem::path& source, const std::filesystem::path& output, Link link = Link::full,
                                        SimBuildChecks checks = {}) const;
  // The symbols a candidate's library may leave for the loader: what libcuset_sim.so and the runtimes
  // it depends on (libstdc++, libm, libgcc_s, libc) define. Null when they cannot be read, in which
  // case every build links fully.
  const std::unordered_set<std::string>* linkableSymbols() const;
  // The precompiled prelude's include folder for builds with `checks`, built on first use; empty when
  // unavailable.
  std::filesystem::path preludePchDir(SimBuildChecks checks = {}) const;

 private:
  SimCompileOutput build(std::string_view source, const std::vector<std::string>& kernelNames, bool checkInitializers, SimBuildChecks checks) const;
  // Whether a build with `checks` has its loads instrumented (and so its own flags and prelude).
  bool instrumentsLoads(SimBuildChecks checks) const;
  // The host compiler's code generation flags for a build with `checks`.
  std::vector<std::string> codeFlags(SimBuildChecks checks) const;
  // What of `library` would run at load time beyond an empty library's start-up code; empty: nothing.
  std::string loadTimeCode(const std::filesystem::path& library) const;

  SimToolchain toolchain_;
  std::filesystem::path cacheDir_;
  SimCompilerOptions options_;
  std::string headersDigest_;  // of the simulator's headers, part of every cache key
  mutable std::once_flag baselineOnce_;
  mutable LoadTimeCode baseline_;
  mutable std::once_flag linkableOnce_;
  mutable std::optional<std::unordered_set<std::string>> linkable_;  // empty: unreadable, every build links fully
  // One precompiled prelude per set of code generation flags: plain, and with loads instrumented.
  struct PreludeVariant {
    std::once_flag once;
    std::filesystem::path include;  // empty: no precompiled prelude
  };
  mutable std::array<PreludeVariant, 3> preludes_;  // plain, loads checked, every access handed to the runtime
};

// The translation unit the host compiler sees (exposed for tests).
std::string simTranslationUnit(std::string_view source, const std::vector<std::string>& kernelNames);
// For a build whose shared-memory accesses go to the runtime: static `__shared__` arrays inside
// functions reached through a reference the address sanitizer instruments (it skips thread_locals).
std::string rewriteStaticSharedForAccessChecks(std::string_view source);
// `extern __shared__ T name[];` becomes a pointer to the block's dynamic shared memory.
std::string rewriteDynamicShared(std::string_view source);
// `static __shared__` / `__shared__ static` as `__shared__` (nvcc accepts the redundant `static`, the
// prelude's `static thread_local` does not take a second one), and `extern __shared__ T s[N]` with a size
// as the static definition nvcc makes of it; line numbers kept.
std::string withoutStaticOfShared(std::string_view source);
// Whether any CUDA thread of the source could reach a barrier or warp collective; if not, threads run
// as plain calls instead of fibers.
bool simNeedsFibers(std::string_view source);

}  // namespace cuset
