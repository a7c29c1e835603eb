#pragma once
// Each subcommand registers its options on the app and a callback that fills a config struct and calls
// one library function. The callbacks report their exit status through `exitCode`.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace cuset {
struct EvalConfig;
}

namespace cuset::cli {

struct CommandContext {
  int exitCode = 0;
  std::vector<std::string> argv;  // recorded in run.json
};

// `cuset eval`'s command line (without "cuset eval") as the run's configuration; throws CLI::ParseError.
EvalConfig evalConfigFromArguments(const std::vector<std::string>& args);

void registerProblemsCommand(CLI::App& app, CommandContext& context);
void registerEvalCommand(CLI::App& app, CommandContext& context);
void registerTokenizeCommand(CLI::App& app, CommandContext& context);
void registerTrainCommand(CLI::App& app, CommandContext& context);
void registerGenerateCommand(CLI::App& app, CommandContext& context);
void registerReportCommand(CLI::App& app, CommandContext& context);
void registerLexCommand(CLI::App& app, CommandContext& context);
void registerAnalyzeCommand(CLI::App& app, CommandContext& context);
void registerDataCommand(CLI::App& app, CommandContext& context);
void registerLoopCommand(CLI::App& app, CommandContext& context);
void registerImportCommand(CLI::App& app, CommandContext& context);
void registerLeaderboardCommand(CLI::App& app, CommandContext& context);
void registerRefineCommand(CLI::App& app, CommandContext& context);
void registerMergeCommand(CLI::App& app, CommandContext& context);
void registerSlurmCommand(CLI::App& app, CommandContext& context);
void registerLaunchCommand(CLI::App& app, CommandContext& context);
void registerTranslateCommand(CLI::App& app, CommandContext& context);
void registerMergeAdapterCommand(CLI::App& app, CommandContext& context);
void registerDoctorCommand(CLI::App& app, CommandContext& context);
void registerServeCommand(CLI::App& app, CommandContext& context);
void registerWorkerCommand(CLI::App& app, CommandContext& context);
void registerEngineCommand(CLI::App& app, CommandContext& context);

}  // namespace cuset::cli
