// `cuset doctor`: what this binary was built with and what this machine lets it run; non-zero exit when
// something the defaults need is missing.
#include <fmt/format.h>

#include "commands.hpp"
#include "cuset/evaluator/pipeline/doctor.hpp"

namespace cuset::cli {

void registerDoctorCommand(CLI::App& app, CommandContext& context) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("doctor", "Check the build and this machine: LibTorch, NVRTC, driver and GPUs, backends, sandbox, Python");
  cmd->add_flag("--json", *json, "Print the checks as JSON");
  cmd->callback([=, &context] {
    const DoctorReport report = runDoctor();
    fmt::print("{}", *json ? report.toJson().dump(2) + "\n" : renderDoctor(report));
    context.exitCode = report.ok() ? 0 : 1;
  });
}

}  // namespace cuset::cli
