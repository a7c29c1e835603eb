// `cuset problems list|show|check`
#include <fmt/format.h>

#include <random>

#include "commands.hpp"
#include "cuset/common/error.hpp"
#include "cuset/common/progress.hpp"
#include "cuset/evaluator/console_format.hpp"
#include "cuset/evaluator/problem_check.hpp"
#include "cuset/evaluator/problem_suite.hpp"

namespace cuset::cli {
namespace {

struct ProblemsConfig {
  std::string problemsDir = "problems";
  std::string id;
  std::uint64_t seed = 0;
};

}  // namespace

void registerProblemsCommand(CLI::App& app, CommandContext& context) {
  auto config = std::make_shared<ProblemsConfig>();
  CLI::App* problems = app.add_subcommand("problems", "List, show and check the problem suite");
  problems->require_subcommand(1);
  auto addDir = [&](CLI::App* sub) {
    sub->add_option("--problems", config->problemsDir, "Problem suite folder")->capture_default_str();
  };

  CLI::App* list = problems->add_subcommand("list", "List every problem with its inputs and outputs");
  addDir(list);
  list->callback([config, &context] {
    const ProblemSuite suite = ProblemSuite::load(config->problemsDir);
    fmt::print("{}", formatProblemList(suite));
    context.exitCode = suite.loadErrors().empty() ? 0 : 1;
  });

  CLI::App* show = problems->add_subcommand("show", "Show one problem in full");
  show->add_option("id", config->id, "Problem id, e.g. level1/relu")->required();
  addDir(show);
  show->callback([config, &context] {
    const ProblemSuite suite = ProblemSuite::load(config->problemsDir);
    const Problem* p = suite.find(config->id);
    if (!p) throw makeError("no problem '{}' in {} (see `cuset problems list`)", config->id, config->problemsDir);
    fmt::print("{}", formatProblemDetails(*p));
    context.exitCode = 0;
  });

  CLI::App* check = problems->add_subcommand(
      "check", "Load every problem, run its reference on small inputs, and flag malformed or degenerate problems");
  addDir(check);
  check->add_option("--seed", config->seed, "Input seed (default: random)");
  check->callback([config, &context] {
    const ProblemSuite suite = ProblemSuite::load(config->problemsDir);
    const std::uint64_t seed = config->seed ? config->seed : std::random_device{}();
    std::vector<ProblemCheckResult> results;
    ProgressBar progress("check", suite.problems().size(), "problem");
    for (const auto& p : suite.problems()) {
      results.push_back(checkProblem(p, seed));
      progress.advance();
    }
    progress.finish();
    fmt::print("{}", formatProblemCheck(results, suite.loadErrors()));
    const bool ok = suite.loadErrors().empty() && std::all_of(results.begin(), results.end(), [](auto& r) { return r.ok(); });
    context.exitCode = ok ? 0 : 1;
  });
}

}  // namespace cuset::cli
