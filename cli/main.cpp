// The cuset executable: subcommand dispatch only.
#include <fmt/format.h>
#include <signal.h>

#include "commands.hpp"
#include "cuset/common/error.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/version.hpp"
#include "cuset/evaluator/compile/nvrtc_worker.hpp"
#include "cuset/evaluator/cuda/cuda_worker.hpp"
#include "cuset/evaluator/pipeline/reference_check.hpp"
#include "cuset/evaluator/sandbox/process_roles.hpp"
#include "cuset/evaluator/sandbox/sandbox.hpp"

int main(int argc, char** argv) {
  // A write past a file-size limit (RLIMIT_FSIZE, a quota) then fails with EFBIG, which the code
  // reports naming the file, instead of SIGXFSZ killing the process mid-write.
  ::signal(SIGXFSZ, SIG_IGN);
  // Helper processes re-execute this binary (process_roles.hpp); they take no user options (DESIGN §4
  // "Sandbox"). Their arguments come from WorkerProcess: [--memory-bytes N] [--payload-fd FD] [--device D].
  const std::string_view role = argc >= 2 ? std::string_view(argv[1]) : std::string_view();
  if (role == cuset::kNvrtcWorkerRole.name) return cuset::runNvrtcWorker();
  if (role == cuset::kReferenceWorkerRole.name) return cuset::runReferenceWorker();
  if (role == cuset::kSimWorkerRole.name || role == cuset::kCudaWorkerRole.name) {
    std::optional<std::size_t> memoryBytes;
    std::optional<int> payloadFd;
    std::optional<int> device;
    for (int i = 2; i + 1 < argc; i += 2) {
      const std::string_view key = argv[i];
      if (key == "--memory-bytes") memoryBytes = std::stoull(argv[i + 1]);
      if (key == "--payload-fd") payloadFd = std::stoi(argv[i + 1]);
      if (key == "--device") device = std::stoi(argv[i + 1]);
    }
    if (role == cuset::kCudaWorkerRole.name) return cuset::runCudaWorker(payloadFd, device);
    if (memoryBytes) return cuset::runSandboxWorker(*memoryBytes, payloadFd);
  }
  cuset::cli::CommandContext context;
  context.argv.assign(argv, argv + argc);

  CLI::App app{"CuSeT: fine-tune code LLMs to write CUDA kernels, and evaluate the kernels they write."};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("cuset {} ({})", cuset::kVersion, cuset::gitRevision()));
  std::string logLevel;
  app.add_option("--log-level", logLevel, "debug, info, warn, error or off (default: $CUSET_LOG or info)");
  app.parse_complete_callback([&] {
    if (!logLevel.empty()) cuset::log::setLevel(cuset::log::parseLevel(logLevel));
  });

  cuset::cli::registerProblemsCommand(app, context);
  cuset::cli::registerEvalCommand(app, context);
  cuset::cli::registerTokenizeCommand(app, context);
  cuset::cli::registerTrainCommand(app, context);
  cuset::cli::registerGenerateCommand(app, context);
  cuset::cli::registerReportCommand(app, context);
  cuset::cli::registerLexCommand(app, context);
  cuset::cli::registerAnalyzeCommand(app, context);
  cuset::cli::registerDataCommand(app, context);
  cuset::cli::registerLoopCommand(app, context);
  cuset::cli::registerImportCommand(app, context);
  cuset::cli::registerLeaderboardCommand(app, context);
  cuset::cli::registerRefineCommand(app, context);
  cuset::cli::registerMergeCommand(app, context);
  cuset::cli::registerSlurmCommand(app, context);
  cuset::cli::registerLaunchCommand(app, context);
  cuset::cli::registerTranslateCommand(app, context);
  cuset::cli::registerMergeAdapterCommand(app, context);
  cuset::cli::registerDoctorCommand(app, context);
  cuset::cli::registerServeCommand(app, context);
  cuset::cli::registerWorkerCommand(app, context);
  cuset::cli::registerEngineCommand(app, context);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    fmt::print(stderr, "cuset: error: {}\n", e.what());
    return 2;
  }
  return context.exitCode;
}
