// `cuset data synth` and `cuset data verify`
#include <fmt/format.h>

#include "commands.hpp"
#include "cuset/synth/dataset_synth.hpp"
#include "cuset/synth/op_family.hpp"
#include "cuset/synth/pair_verify.hpp"

namespace cuset::cli {

void registerDataCommand(CLI::App& app, CommandContext& context) {
  CLI::App* data = app.add_subcommand("data", "Training data: synthesise verified instruction/response pairs, or verify given ones");
  data->require_subcommand(1);
  auto o = std::make_shared<synth::SynthOptions>();
  auto quiet = std::make_shared<bool>(false);
  std::string familyHelp = "Training families (default: all but the held-out ones):";
  for (const auto& f : synth::allFamilies()) familyHelp += fmt::format(" {}", f->name());
  CLI::App* cmd = data->add_subcommand("synth", "Generate problem instances with verified (sim) responses, held-out problems and a dataset card");
  cmd->add_option("--out", o->out, "Training JSONL to write (card, held-out suite and verification run go next to it)")->required();
  cmd->add_option("--families", o->families, familyHelp)->delimiter(',');
  cmd->add_option("--heldout-families", o->heldoutFamilies, "Families never trained on (an evaluation set of their own)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--per-family", o->perFamily, "Training samples per family, before rejects")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Generator seed (sizes, names, implementations, held-out split)")->capture_default_str();
  cmd->add_option("--heldout-fraction", o->heldoutVariantFraction, "Share of each training family's variants held out")->capture_default_str();
  cmd->add_option("--heldout-instances", o->heldoutInstances, "Held-out new instances (sizes, tensor names) of trained variants")
      ->capture_default_str();
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

  auto v = std::make_shared<synth::VerifyOptions>();
  CLI::App* verify = data->add_subcommand(
      "verify", "Keep the pairs whose response the evaluator judges correct for its problem (a /*@cuset kernel or a KernelBench solution)");
  verify->add_option("pairs", v->pairs, "JSONL of {problem, instruction, response} or {problem, messages}")->required();
  verify->add_option("--problems", v->problems, "The suite the pairs' problem ids name")->required();
  verify->add_option("--out", v->out, "The accepted pairs, as given (OUT.verify.json lists every rejected one)")->required();
  verify->add_option("--seed", v->seed, "Input seed of the verification trials")->capture_default_str();
  verify->add_option("--trials", v->trials, "Sim correctness trials per response")->check(CLI::Range(1, 100))->capture_default_str();
  verify->add_option("--jobs,-j", v->jobs, "Parallel compiles (0 = one per core)")->capture_default_str();
  verify->add_option("--cache-dir", v->cacheDir, "Compile cache folder");
  verify->add_flag("--quiet,-q", *quiet, "No progress bar");
  verify->callback([v, quiet, &context] {
    v->showProgress = !*quiet;
    const synth::VerifySummary s = synth::runVerifyPairs(*v);
    fmt::print("{} of {} pairs verified correct ({} rejected), {:.1f} s\naccepted: {}\nrejects: {}\nrun: {}\n", s.accepted, s.pairs, s.rejected,
               s.seconds, v->out.string(), s.report.string(), s.run.string());
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
