// The agreement corpus (tests/agreement/levelN/<problem>/*.cu, docs/simulator.md): kernels whose GPU
// verdict follows from a rule of CUDA (each file names it in `@rule`) get that verdict on the
// simulator and on the cuda backend through the fake driver. benchmarks/device/check.sh judges the
// same files on a real GPU and prints the sim-vs-GPU table.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>

#include "cuset/evaluator/compile/sim_compiler.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/evaluator/pipeline/solution_check.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(CUSET_SOURCE_DIR) / "tests" / "agreement";

struct Case {
  fs::path file;
  std::string source;
  std::string kernel;  // the manifest's (one kernel per file)
  SolutionExpectation expected;
};

std::vector<Case> corpus() {
  std::vector<Case> out;
  for (const auto& e : fs::recursive_directory_iterator(kCorpus)) {
    if (e.path().extension() != ".cu") continue;
    Case c{e.path(), test::readText(e.path()), "", {}};
    EXPECT_NE(c.source.find("// @rule:"), std::string::npos) << c.file << " names no rule";
    std::smatch m;
    if (std::regex_search(c.source, m, std::regex(R"(kernel:\s*([A-Za-z_]\w*))"))) c.kernel = m[1].str();
    const bool good = c.source.find("// @expect: correct") != std::string::npos;
    auto expectation = readSolutionExpectation(fs::path((good ? "" : "bad_") + c.file.filename().string()), c.source);
    EXPECT_TRUE(expectation) << c.file << ": " << (expectation ? "" : expectation.error());
    if (expectation) c.expected = *expectation;
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const Case& a, const Case& b) { return a.file < b.file; });
  return out;
}

EvalConfig config(const fs::path& candidates, const fs::path& dir, BackendKind backend) {
  EvalConfig c;
  c.problemsDir = CUSET_PROBLEMS_DIR;
  c.candidatesPath = candidates;
  c.outDir = dir / "run";
  c.cacheDir = dir / "cache";
  c.backend = backend;
  c.sizeSet = "small";
  c.jobs = 2;
  c.trials = 2;
  c.seed = 17;
  c.showProgress = false;
  return c;
}

void expectVerdict(const Case& c, const EvalResult& r) {
  EXPECT_EQ(verdictName(r.verdict), verdictName(c.expected.verdict)) << c.file.filename() << ": " << r.reason;
  EXPECT_NE(r.reason.find(c.expected.reasonContains), std::string::npos) << c.file.filename() << ": " << r.reason;
}

TEST(Agreement, EveryRuleGetsTheGpusVerdictOnTheSimulator) {
  ::setenv("CUSET_WORKER", CUSET_BINARY, 1);
  const std::vector<Case> all = corpus();
  ASSERT_GE(all.size(), 8u);
  test::TempDir dir;
  const EvalRunSummary s = runEvaluation(config(kCorpus, dir.path(), BackendKind::sim));
  ASSERT_EQ(s.results.size(), all.size());
  std::map<std::string, const EvalResult*> byFile;
  for (const auto& r : s.results) byFile[fs::path(r.origin).filename().string()] = &r;
  for (const Case& c : all) {
    const auto it = byFile.find(c.file.filename().string());
    ASSERT_NE(it, byFile.end()) << c.file;
    expectVerdict(c, *it->second);
  }
}

// On the cuda backend the fake driver runs the simulator's build of each kernel: what the pipeline
// decides before a launch (launch resources) and what the kernel does (alignment, shared memory) must
// give the same verdicts there.
TEST(Agreement, EveryRuleGetsTheGpusVerdictOnTheFakeGpu) {
  ::setenv("CUSET_WORKER", CUSET_BINARY, 1);
  ::setenv("CUSET_LIBCUDA", CUSET_FAKE_LIBCUDA, 1);
  test::TempDir shared;  // one cache for every run: the problems' references are computed once
  for (const Case& c : corpus()) {
    SCOPED_TRACE(c.file.filename().string());
    test::TempDir dir;
    const SimCompiler compiler(SimToolchain::fromBuild(), dir / "kernels");
    const auto built = compiler.compile(c.source, {c.kernel});
    ASSERT_TRUE(built.ok) << built.log;
    ::setenv("CUSET_FAKE_CUDA_KERNELS", built.library.c_str(), 1);
    const fs::path candidates = dir / "cands" / c.file.parent_path().parent_path().filename() / c.file.parent_path().filename();
    fs::create_directories(candidates);
    fs::copy_file(c.file, candidates / c.file.filename());
    EvalConfig cfg = config(dir / "cands", dir.path(), BackendKind::cuda);
    cfg.jobs = 1;
    cfg.cacheDir = shared / "cache";
    cfg.cuda.timer = "events";
    cfg.cuda.minSeconds = 0.05;
    cfg.cuda.maxSeconds = 0.3;
    const EvalRunSummary s = runEvaluation(cfg);
    ASSERT_EQ(s.results.size(), 1u);
    expectVerdict(c, s.results[0]);
  }
  ::unsetenv("CUSET_LIBCUDA");
  ::unsetenv("CUSET_FAKE_CUDA_KERNELS");
}

}  // namespace
}  // namespace cuset
