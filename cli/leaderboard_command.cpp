// `cuset leaderboard --config FILE [--compare BASE_DIR] [--fail-on-regression] [--report-only]`
#include <fmt/format.h>

#include "commands.hpp"
#include "cuset/loop/leaderboard_config.hpp"
#include "cuset/loop/leaderboard_runner.hpp"

namespace cuset::cli {

void registerLeaderboardCommand(CLI::App& app, CommandContext& context) {
  auto config = std::make_shared<std::string>();
  auto compare = std::make_shared<std::string>();
  auto failOnRegression = std::make_shared<bool>(false);
  auto options = std::make_shared<LeaderboardRunOptions>();
  auto quiet = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("leaderboard", "Generate and evaluate every model of a config, resumably, and rank them in one leaderboard");
  cmd->add_option("--config", *config, "Leaderboard YAML: models, problems, k, eval settings (docs/cli-leaderboard.md)")->required();
  cmd->add_option("--compare", *compare, "Base leaderboard folder: compare each model with its run there (cuset report's rules)");
  cmd->add_flag("--fail-on-regression", *failOnRegression, "Exit 3 when some model is worse than in the base leaderboard")
      ->needs(cmd->get_option("--compare"));
  cmd->add_flag("--report-only", options->reportOnly, "Rewrite the leaderboard from what has finished; generate and evaluate nothing");
  cmd->add_flag("--quiet,-q", *quiet, "No progress bars");
  cmd->callback([=, &context] {
    const LeaderboardConfig c = LeaderboardConfig::load(*config);
    if (!compare->empty()) options->compareDir = *compare;
    options->showProgress = !*quiet;
    const LeaderboardSummary s = runLeaderboard(c, *options);
    fmt::print("{}\n", s.table);
    fmt::print("leaderboard: {} ({} models evaluated, {} already current)\n", s.html.string(), s.modelsRun, s.modelsSkipped);
    for (const auto& failure : s.failures) fmt::print(stderr, "cuset: error: leaderboard model {}\n", failure);
    context.exitCode = !s.failures.empty() ? 1 : (*failOnRegression && s.regression) ? 3 : 0;
  });
}

}  // namespace cuset::cli
