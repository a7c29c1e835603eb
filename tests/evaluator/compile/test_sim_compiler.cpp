// The sim backend's host build and its precompiled prelude.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "cuset/common/file_util.hpp"
#include "cuset/common/subprocess.hpp"
#include "cuset/evaluator/compile/dynamic_symbols.hpp"
#include "cuset/evaluator/compile/sim_compiler.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

namespace fs = std::filesystem;

const std::string kRelu =
    "extern \"C\" __global__ void relu_kernel(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = fmaxf(x[i], 0.f);\n}\n";

std::vector<fs::path> filesUnder(const fs::path& root) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  return files;
}

TEST(SimCompiler, TheHostCompilerTakesThePreludePrecompiled) {
  test::TempDir dir;
  const SimCompiler compiler(SimToolchain::fromBuild(), dir / "libs", SimCompilerOptions{.pchDir = dir / "pch"});
  const SimCompileOutput out = compiler.compile(kRelu, {"relu_kernel"});
  ASSERT_TRUE(out.ok) << out.log;
  EXPECT_TRUE(out.precompiledPrelude);
  ASSERT_FALSE(compiler.preludePchDir().empty());

  // The compiler's own account (-H prints "! file.gch" for a precompiled header it used).
  test::writeText(dir / "tu.cpp", simTranslationUnit(kRelu, {"relu_kernel"}));
  std::vector<std::string> argv = compiler.buildCommand(dir / "tu.cpp", dir / "tu.so");
  argv.push_back("-H");
  const SubprocessResult r = runSubprocess(argv, std::chrono::seconds(120));
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_NE(r.output.find("! " + (compiler.preludePchDir() / "cuset_sim" / "prelude.hpp.gch").string()), std::string::npos) << r.output;
}

TEST(SimCompiler, AChangedPreludeGetsAPrecompiledHeaderOfItsOwn) {
  test::TempDir dir;
  SimToolchain toolchain = SimToolchain::fromBuild();
  fs::copy(toolchain.simInclude, dir / "include", fs::copy_options::recursive);
  toolchain.simInclude = dir / "include";
  const SimCompiler before(toolchain, dir / "libs-before", SimCompilerOptions{.pchDir = dir / "pch"});
  const fs::path first = before.preludePchDir();
  ASSERT_FALSE(first.empty());

  // A prelude edit must never be hidden by the old .gch (GCC does not check the headers behind one).
  std::string prelude = test::readText(dir / "include" / "cuset_sim" / "prelude.hpp");
  test::writeText(dir / "include" / "cuset_sim" / "prelude.hpp", prelude + "\n#define CUSET_TEST_ONLY_IN_THE_NEW_PRELUDE 1\n");
  const SimCompiler after(toolchain, dir / "libs-after", SimCompilerOptions{.pchDir = dir / "pch"});
  EXPECT_NE(after.preludePchDir(), first);
  const SimCompileOutput out = after.compile("extern \"C\" __global__ void k(int* y) { y[0] = CUSET_TEST_ONLY_IN_THE_NEW_PRELUDE; }\n", {"k"});
  EXPECT_TRUE(out.ok) << out.log;
  EXPECT_TRUE(out.precompiledPrelude);
}

TEST(SimCompiler, ConcurrentFirstBuildsShareOnePrecompiledHeader) {
  test::TempDir dir;
  std::atomic<int> ok{0}, precompiled{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      const SimCompiler compiler(SimToolchain::fromBuild(), dir / ("libs" + std::to_string(t)), SimCompilerOptions{.pchDir = dir / "pch"});
      const SimCompileOutput out = compiler.compile(kRelu, {"relu_kernel"});
      ok += out.ok;
      precompiled += out.precompiledPrelude;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 3);
  EXPECT_EQ(precompiled, 3);
  int gch = 0, other = 0;
  for (const auto& f : filesUnder(dir / "pch")) {
    if (f.extension() == ".gch")
      ++gch;
    else if (f.extension() != ".lock")
      ++other;
  }
  EXPECT_EQ(gch, 1);
  EXPECT_EQ(other, 0) << "a temporary .gch was left behind";
}

TEST(SimCompiler, WithoutAPrecompiledPreludeItStillBuilds) {
  test::TempDir dir;
  const SimCompiler compiler(SimToolchain::fromBuild(), dir / "libs", SimCompilerOptions{.pchDir = {}});
  const SimCompileOutput out = compiler.compile(kRelu, {"relu_kernel"});
  EXPECT_TRUE(out.ok) << out.log;
  EXPECT_FALSE(out.precompiledPrelude);
  EXPECT_TRUE(compiler.preludePchDir().empty());
}

bool contains(const std::vector<std::string>& names, std::string_view name) { return std::find(names.begin(), names.end(), name) != names.end(); }

// The dynamic symbols of a build's library; an unreadable library fails the test.
DynamicSymbols librarySymbols(const SimCompileOutput& out) {
  auto symbols = readDynamicSymbols(readBinaryFile(out.library));
  if (!symbols) ADD_FAILURE() << out.library << ": " << symbols.error();
  return symbols ? std::move(*symbols) : DynamicSymbols{};
}

TEST(SimCompiler, TheLibraryIsLinkedAgainstLibcusetSimAloneAndTheLoaderFindsTheRuntimes) {
  test::TempDir dir;
  const SimCompiler compiler(SimToolchain::fromBuild(), dir / "libs", SimCompilerOptions{.pchDir = dir / "pch"});
  ASSERT_NE(compiler.linkableSymbols(), nullptr) << "libcuset_sim.so or its runtimes could not be read";
  const SimCompileOutput out =
      compiler.compile("extern \"C\" __global__ void k(const float* x, float* y) { y[threadIdx.x] = expf(x[threadIdx.x]); }\n", {"k"});
  ASSERT_TRUE(out.ok) << out.log;
  const DynamicSymbols symbols = librarySymbols(out);
  EXPECT_TRUE(contains(symbols.defined, "cuset_sim_kernels"));
  EXPECT_TRUE(contains(symbols.needed, "libcuset_sim.so"));
  EXPECT_FALSE(contains(symbols.needed, "libm.so.6")) << "linked against libm: the runtime-checked link was not taken";
  // expf (libm) and the static table's guard (libstdc++) are left to the loader, which finds them
  // through libcuset_sim.so's own dependencies.
  ASSERT_TRUE(contains(symbols.undefined, "expf"));
  EXPECT_TRUE(compiler.linkableSymbols()->contains("expf"));
  EXPECT_TRUE(compiler.linkableSymbols()->contains("__cxa_guard_acquire"));
  EXPECT_FALSE(compiler.linkableSymbols()->contains("cuset_no_such_symbol"));
}

TEST(SimCompiler, ASymbolNoLibraryDefinesIsStillTheLinkersError) {
  test::TempDir dir;
  const SimCompiler compiler(SimToolchain::fromBuild(), dir / "libs", SimCompilerOptions{.pchDir = dir / "pch"});
  const SimCompileOutput out = compiler.compile(
      "extern \"C\" void cuset_defined_nowhere(float*);\n"
      "extern \"C\" __global__ void k(float* y) { cuset_defined_nowhere(y); }\n",
      {"k"});
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.log.find("undefined reference to 'cuset_defined_nowhere'"), std::string::npos) << out.log;
}

TEST(SimCompiler, WhatOnlyAStaticPartOfTheRuntimesDefinesStillLinks) {
  // atexit lives in libc_nonshared.a, not in libc.so.6: the check sends this build to the full link.
  test::TempDir dir;
  const SimCompiler compiler(SimToolchain::fromBuild(), dir / "libs", SimCompilerOptions{.pchDir = dir / "pch"});
  const SimCompileOutput out = compiler.compile("static void bye() {}\nextern \"C\" __global__ void k(int* y) { y[0] = atexit(bye); }\n", {"k"});
  ASSERT_TRUE(out.ok) << out.log;
  EXPECT_FALSE(contains(librarySymbols(out).undefined, "atexit"));
}

// Loads are instrumented only for builds that must check buffer tails, with a precompiled prelude
// of their own (the instrumented flags define __SANITIZE_ADDRESS__, so the plain .gch would not load),
// and the two builds of one source are two libraries.
TEST(SimCompiler, OnlyABuildThatChecksTailsHasItsLoadsInstrumented) {
  test::TempDir dir;
  const SimCompiler compiler(SimToolchain::fromBuild(), dir / "libs", SimCompilerOptions{.pchDir = dir / "pch"});
  const SimCompileOutput plain = compiler.compile(kRelu, {"relu_kernel"});
  const SimCompileOutput checked = compiler.compile(kRelu, {"relu_kernel"}, {.tailReads = true});
  ASSERT_TRUE(plain.ok) << plain.log;
  ASSERT_TRUE(checked.ok) << checked.log;
  EXPECT_FALSE(plain.tailReadsChecked);
  EXPECT_TRUE(checked.tailReadsChecked);
  EXPECT_TRUE(checked.precompiledPrelude);
  EXPECT_NE(plain.library, checked.library);
  EXPECT_NE(compiler.preludePchDir(), compiler.preludePchDir({.tailReads = true}));
  // The prelude's checks are hidden, direct calls; only a load near a page's end reaches libcuset_sim.
  EXPECT_FALSE(contains(librarySymbols(plain).undefined, "cuset_sim_tail_read"));
  EXPECT_TRUE(contains(librarySymbols(checked).undefined, "cuset_sim_tail_read"));
  EXPECT_FALSE(contains(librarySymbols(checked).undefined, "__asan_load4_noabort"));
  EXPECT_FALSE(contains(librarySymbols(checked).undefined, "__asan_store4_noabort")) << "stores need no check: guard bytes catch them";
  EXPECT_TRUE(compiler.linkableSymbols()->contains("cuset_sim_tail_read"));

  const SimCompiler unchecked(SimToolchain::fromBuild(), dir / "libs",
                              SimCompilerOptions{.pchDir = dir / "pch", .codegen = {.tailReadCheck = false}});
  EXPECT_FALSE(unchecked.compile(kRelu, {"relu_kernel"}, {.tailReads = true}).tailReadsChecked);
}

TEST(DynamicSymbols, ACorruptImageIsAnError) {
  std::vector<std::byte> image(64, std::byte{0});
  EXPECT_FALSE(readDynamicSymbols(image));
  std::memcpy(image.data(),
              "\x7f"
              "ELF\x02",
              5);
  image[58] = std::byte{64};  // e_shentsize right, but the section table lies past the end
  image[60] = std::byte{3};
  image[40] = std::byte{0xff};
  EXPECT_FALSE(readDynamicSymbols(image));
}

}  // namespace
}  // namespace cuset

namespace cuset {
namespace {

// A race-checking build reaches static __shared__ arrays through a reference (the address sanitizer
// skips thread_locals); what it cannot rewrite keeps its form, and line numbers never move.
TEST(SimCompiler, StaticSharedArraysAreReachedThroughAReferenceInRaceCheckingBuilds) {
  const std::string source =
      "__shared__ int outside[4];\n"
      "__global__ void k(float* y) {\n"
      "  __shared__ __align__(16) float tile[32][33];\n"
      "  static __shared__ int hits;\n"
      "  __shared__ float a[2], b[2];\n"
      "  extern __shared__ float dyn[];\n"
      "  y[0] = tile[0][0] + hits + a[0] + b[0] + outside[0];\n"
      "}\n";
  const std::string out = rewriteStaticSharedForAccessChecks(source);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), std::count(source.begin(), source.end(), '\n'));
  EXPECT_NE(out.find("__shared__ __align__(16) float tile__cuset_storage[32][33]; auto& tile = *::cuset_sim::opaque(&tile__cuset_storage);"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("__shared__ int hits__cuset_storage; auto& hits = *::cuset_sim::opaque(&hits__cuset_storage);"), std::string::npos) << out;
  EXPECT_NE(out.find("__shared__ int outside[4];"), std::string::npos) << out;      // namespace scope: as it was
  EXPECT_NE(out.find("__shared__ float a[2], b[2];"), std::string::npos) << out;    // two declarators: as they were
  EXPECT_NE(out.find("extern __shared__ float dyn[];"), std::string::npos) << out;  // dynamic: rewritten elsewhere
}

// A redundant `static` on __shared__ (real solutions write `static __shared__ float shared[...]`, which
// nvcc takes) and a sized `extern __shared__` build; before, GCC refused "duplicate 'static'" and
// "conflicting specifiers" and the kernel was unsupported here.
TEST(SimCompiler, AStaticSharedArrayBuildsAsNvccTakesIt) {
  EXPECT_EQ(withoutStaticOfShared("static __shared__ float a[4];\n__shared__ static int b;\nstatic int c;\n"),
            "__shared__ float a[4];\n__shared__ int b;\nstatic int c;\n");
  // With a size, `extern __shared__` is a static definition to nvcc ("conflicting specifiers" to GCC);
  // without one it is the dynamic array and stays.
  EXPECT_EQ(withoutStaticOfShared("extern __shared__ float t[256];\nextern __shared__ float d[];\n"),
            "__shared__ float t[256];\nextern __shared__ float d[];\n");
  test::TempDir dir;
  const SimCompiler compiler(SimToolchain::fromBuild(), dir / "libs", SimCompilerOptions{.pchDir = dir / "pch"});
  const SimCompileOutput out = compiler.compile(
      "extern \"C\" __global__ void k(float* y) {\n  static __shared__ float s[32];\n  __shared__ static int n;\n"
      "  extern __shared__ float t[32];\n"
      "  s[threadIdx.x] = threadIdx.x; n = 1;\n  __syncthreads();\n  y[threadIdx.x] = s[31 - threadIdx.x] + n;\n}\n",
      {"k"});
  EXPECT_TRUE(out.ok) << out.log;
}

}  // namespace
}  // namespace cuset
