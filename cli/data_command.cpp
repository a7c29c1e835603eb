// `cuset data synth`
#include <fmt/format.h>

#include "commands.hpp"
#include "cuset/synth/dataset_synth.hpp"
#include "cuset/synth/op_family.hpp"

namespace cuset::cli {

void registerDataCommand(CLI::App& app, CommandContext& context) {
  CLI::App* data = app.add_subcommand("data", "Training data: synthesise verified instruction/response pairs");
  data->require_subcommand(1);
  auto o = std::make_shared<synth::SynthOptions>();
  auto quiet = std::make_shared<bool>(false);
  std::string familyHelp = "Training families (default: all but the held-out ones):";
  for (const auto& f : synth::allFamilies()) familyHelp += fmt::format(" {}", f->name());
  CLI::App* cmd = data->add_subcommand("synth", "Generate problem instances with verified (sim) responses, held-out problems and a dataset card");
  cmd->add_option("--out", o->out, "Training JSONL to write (card, held-out suite and verification run go next to it)")->required();
  cmd->add_option("--families", o->families, familyHelp)->delimiter(',');
  cmd->add_option("--heldout-families", o->heldoutFamilies, "Families never trained on (an evaluation set of their own)")->delimiter(',')->capture_default_str();
  cmd->add_option("--per-family", o->perFamily, "Training samples per family, before rejects")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Generator seed (sizes, names, implementations, held-out split)")->capture_default_str();
  cmd->add_option("--heldout-fraction", o->heldoutVariantFraction, "Share of each training family's variants held out")->capture_default_str();
  cmd->add_option("--heldout-instances", o->heldoutInstances, "Held-out new instances (sizes, tensor names) of trained variants")->capture_default_str();
  cmd->add_option("--heldout-variants", o->heldoutVariants, "Held-out problems from variants never trained on, at most")->capture_default_str();
  cmd->add_option("--heldout-per-family", o->heldoutPerFamily, "Problems per unseen family")->capture_default_str();
  cmd->add_option("--trials", o->trials, "Sim correctness trials per response")->check(CLI::Range(1, 100))->capture_default_str();
  cmd->add_option("--jobs,-j", o->jobs, "Parallel compiles (0 = one per core)")->capture_default_str();
  cmd->add_option("--cache-dir", o->cacheDir, "Compile cache folder");
  cmd->add_flag("--quiet,-q", *quiet, "No progress bar");
  cmd->callback([o, quiet, &context] {
    o->showProgress = !*quiet;
    const synth::SynthSummary s = synth::runSynth(*o);
    fmt::print("{} verified samples ({} rejected), {} held-out problems, {:.1f} s\ntrain: {}\ncard: {}\nheld-out suite: {}\n", s.samples, s.rejected,
               s.heldoutProblems, s.seconds, s.paths.train.string(), s.paths.cardMarkdown.string(), s.paths.heldoutDir.string());
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
