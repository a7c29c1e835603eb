// `cuset problems list|show|prompt|table|check`
#include <fmt/format.h>

#include <cstdint>
#include <random>

#include "commands.hpp"
#include "cuset/common/resources.hpp"
#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/progress.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"
#include "cuset/evaluator/pipeline/reference_check.hpp"
#include "cuset/evaluator/pipeline/solution_check.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/suite/problem_check.hpp"
#include "cuset/evaluator/suite/suite_format.hpp"
#include "cuset/evaluator/suite/suite_table.hpp"
#include "cuset/trainer/problem_prompt.hpp"

namespace cuset::cli {
namespace {

struct ProblemsConfig {
  std::string problemsDir = "problems";
  std::string id;
  std::uint64_t seed = 0;
  bool solutions = false;
  std::string backend = "sim";
  std::size_t jobs = 0;
  std::string outDir;
  std::string updateFile;
  std::string checkFile;
  double referenceTimeout = 120.0;
};

// Evaluates every solution folder of the suite like `cuset eval --candidates DIR` and compares each
// verdict with the one the solution expects.
bool checkSolutions(const ProblemsConfig& config, const ProblemSuite& suite, const std::vector<std::string>& argv) {
  EvalConfig eval;
  eval.problemsDir = config.problemsDir;
  eval.candidatesPath = config.problemsDir;
  eval.outDir = config.outDir;
  eval.backend = *parseBackend(config.backend);
  eval.jobs = config.jobs;
  eval.seed = config.seed;
  eval.defaultModel = "solutions";
  eval.commandLine = argv;
  const EvalRunSummary summary = runEvaluation(eval);
  const std::vector<SolutionCheckRow> rows = compareSolutionVerdicts(suite, summary.results, eval.backend);
  fmt::print("{}", formatSolutionCheck(rows));
  fmt::print("results: {} ({:.1f} s)\n", (summary.runDir / "results.jsonl").string(), summary.seconds);
  return std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.ok(); });
}

}  // namespace

namespace {

const Problem& problemNamed(const ProblemSuite& suite, const ProblemsConfig& config) {
  const Problem* p = suite.find(config.id);
  if (!p) throw makeError("no problem '{}' in {} (see `cuset problems list`)", config.id, config.problemsDir);
  return *p;
}

void addProblemsDir(ProblemsConfig& config, CLI::App* sub) {
  config.problemsDir = defaultProblemsDir().string();  // ./problems in a checkout, else the installed suite
  sub->add_option("--problems", config.problemsDir, "Problem suite folder")->capture_default_str();
}

// `cuset problems table`: the suite as Markdown, or the table in a README refreshed or checked.
void addTableCommand(CLI::App* problems, const std::shared_ptr<ProblemsConfig>& config, CommandContext& context) {
  CLI::App* table = problems->add_subcommand("table", "Print the suite as a Markdown table, or refresh the one in a README");
  addProblemsDir(*config, table);
  auto* update = table->add_option("--update", config->updateFile, "Rewrite the table between the generated-table markers of this file");
  table->add_option("--check", config->checkFile, "Exit 1 if the table in this file is not the current one")->excludes(update);
  table->callback([config, &context] {
    const ProblemSuite suite = ProblemSuite::load(config->problemsDir);
    suite.requireNoErrors();
    const std::string markdown = formatSuiteMarkdown(suite);
    const std::string& file = config->updateFile.empty() ? config->checkFile : config->updateFile;
    context.exitCode = 0;
    if (file.empty()) {
      fmt::print("{}", markdown);
      return;
    }
    const std::string document = readFile(file);
    const auto refreshed = replaceGeneratedTable(document, markdown);
    if (!refreshed) throw makeError("{}: {}", file, refreshed.error());
    if (!config->updateFile.empty()) {
      if (*refreshed != document) writeFileAtomic(file, *refreshed);
      fmt::print("{}: table of {} problems {}\n", file, suite.problems().size(), *refreshed == document ? "already current" : "updated");
    } else if (*refreshed != document) {
      fmt::print(stderr, "{}: the problem table is stale; run `cuset problems table --update {}`\n", file, file);
      context.exitCode = 1;
    }
  });
}

// `cuset problems check`: every reference run on small inputs; with --solutions, every solution judged.
void addCheckCommand(CLI::App* problems, const std::shared_ptr<ProblemsConfig>& config, CommandContext& context) {
  CLI::App* check =
      problems->add_subcommand("check", "Load every problem, run its reference on small inputs, and flag malformed or degenerate problems");
  addProblemsDir(*config, check);
  check->add_option("--seed", config->seed, "Input seed (default: random)");
  check->add_flag("--solutions", config->solutions,
                  "Also evaluate every solutions/*.cu: good ones must be correct, bad_*.cu must get their recorded verdict");
  check->add_option("--backend", config->backend, "Backend for --solutions")->check(CLI::IsMember({"sim", "compile-only"}))->capture_default_str();
  check->add_option("--reference-timeout", config->referenceTimeout, "Seconds each problem's check may take (a reference that never returns fails)")
      ->check(CLI::Range(1.0, 36000.0))
      ->capture_default_str();
  check->add_option("--jobs,-j", config->jobs, "Parallel solutions for --solutions (default: one per core)");
  check->add_option("--out", config->outDir, "Run folder for --solutions results (default: runs/<timestamp>-<backend>)");
  check->callback([config, &context] {
    const ProblemSuite suite = ProblemSuite::load(config->problemsDir);
    if (!config->seed) config->seed = std::random_device{}();
    const std::uint64_t seed = config->seed;
    std::vector<std::string> ids;
    for (const auto& p : suite.problems()) ids.push_back(p.id);
    ProgressBar progress("check", ids.size(), "problem");
    // In a helper process, so that a reference that never returns is a failure, not a hang.
    const std::vector<ProblemCheckResult> results =
        checkProblemsIsolated(config->problemsDir, ids, seed, std::chrono::milliseconds(static_cast<long long>(config->referenceTimeout * 1000)),
                              [&] { progress.advance(); });
    progress.finish();
    fmt::print("{}", formatProblemCheck(results, suite.loadErrors()));
    bool ok = suite.loadErrors().empty() && std::all_of(results.begin(), results.end(), [](auto& r) { return r.ok(); });
    if (config->solutions) ok = checkSolutions(*config, suite, context.argv) && ok;
    context.exitCode = ok ? 0 : 1;
  });
}

}  // namespace

void registerProblemsCommand(CLI::App& app, CommandContext& context) {
  auto config = std::make_shared<ProblemsConfig>();
  CLI::App* problems = app.add_subcommand("problems", "List, show and check the problem suite");
  problems->require_subcommand(1);

  CLI::App* list = problems->add_subcommand("list", "List every problem with its inputs and outputs");
  addProblemsDir(*config, list);
  list->callback([config, &context] {
    const ProblemSuite suite = ProblemSuite::load(config->problemsDir);
    fmt::print("{}", formatProblemList(suite));
    context.exitCode = suite.loadErrors().empty() ? 0 : 1;
  });

  CLI::App* show = problems->add_subcommand("show", "Show one problem in full");
  show->add_option("id", config->id, "Problem id, e.g. level1/relu")->required();
  addProblemsDir(*config, show);
  show->callback([config, &context] {
    const ProblemSuite suite = ProblemSuite::load(config->problemsDir);
    const Problem* p = &problemNamed(suite, *config);
    fmt::print("{}", formatProblemDetails(*p));
    context.exitCode = 0;
  });

  auto style = std::make_shared<std::string>("cuset");
  CLI::App* prompt = problems->add_subcommand("prompt", "Print the chat messages a model is asked with for one problem (docs/prompts.md)");
  prompt->add_option("id", config->id, "Problem id, e.g. level1/relu")->required();
  prompt->add_option("--style", *style, "cuset, kernelbench or kernelbench-native")
      ->check(CLI::IsMember({"cuset", "kernelbench", "kernelbench-native"}))
      ->capture_default_str();
  auto kernelbench = std::make_shared<std::filesystem::path>();
  prompt->add_option("--kernelbench", *kernelbench, "kernelbench-native: the KernelBench checkout (default: the suite's import)");
  addProblemsDir(*config, prompt);
  prompt->callback([config, style, kernelbench, &context] {
    const ProblemSuite suite = ProblemSuite::load(config->problemsDir);
    const Problem* p = &problemNamed(suite, *config);
    for (const auto& m : renderProblemChat(*p, *parsePromptStyle(*style), PromptContext{*kernelbench, config->problemsDir})) {
      fmt::print("=== {} ===\n{}\n", m.role, m.content);
    }
    context.exitCode = 0;
  });

  addTableCommand(problems, config, context);
  addCheckCommand(problems, config, context);
}

}  // namespace cuset::cli
