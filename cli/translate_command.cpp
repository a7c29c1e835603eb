// `cuset translate SOLUTION --problem ID`: what a KernelBench solution becomes (docs/kernelbench.md).
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "cuset/common/resources.hpp"
#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/evaluator/problem/problem_suite.hpp"
#include "cuset/evaluator/kernelbench/kernelbench_translator.hpp"

namespace cuset::cli {

void registerTranslateCommand(CLI::App& app, CommandContext& context) {
  struct Options {
    std::filesystem::path solution;
    std::string problem;
    std::filesystem::path problems = "problems";
    bool json = false;
    bool noCache = false;
  };
  auto o = std::make_shared<Options>();
  o->problems = defaultProblemsDir();
  CLI::App* cmd = app.add_subcommand("translate", "Show the launch plan a KernelBench solution (ModelNew + load_inline) translates to");
  cmd->add_option("solution", o->solution, "The solution: a .py file, or a model's response with a ```python block")->required();
  cmd->add_option("--problem", o->problem, "The problem it solves (level1/kb19_relu)")->required();
  cmd->add_option("--problems", o->problems, "The suite")->capture_default_str();
  cmd->add_flag("--json", o->json, "The recording as JSON, per size set, instead of the summary");
  cmd->add_flag("--no-cache", o->noCache, "Translate again even when the cache has this solution");
  cmd->callback([o, &context] {
    const ProblemSuite suite = ProblemSuite::load(o->problems);
    suite.requireNoErrors();
    const Problem* problem = suite.find(o->problem);
    if (!problem) throw makeError("{}: no problem '{}'", o->problems.string(), o->problem);
    std::string source = readFile(o->solution);
    if (!isKernelBenchSolution(source)) {
      auto extracted = extractCodeFromResponse(source);
      if (!extracted || !isKernelBenchSolution(*extracted)) throw makeError("{}: not a KernelBench solution (no ModelNew)", o->solution.string());
      source = *extracted;
    }
    const KernelBenchTranslator translator(TranslatorOptions{.cacheDir = o->noCache ? std::filesystem::path() : defaultCacheDir() / "kernelbench"});
    const Translation t = translator.translate(*problem, source);
    if (o->json) {
      std::cout << nlohmann::json{{"verdict", t.ok() ? std::string_view("plan") : verdictName(*t.verdict)},
                                  {"reason", t.reason},
                                  {"plans", t.recorded},
                                  {"device_source", t.plan.deviceSource},
                                  {"milliseconds", t.milliseconds},
                                  {"cache_hit", t.cacheHit}}
                       .dump(2)
                << "\n";
    } else {
      fmt::print("{}", describeTranslation(t));
    }
    context.exitCode = t.ok() ? 0 : 1;
  });
}

}  // namespace cuset::cli
