// `cuset generate`
#include <fmt/format.h>

#include "commands.hpp"
#include "cuset/trainer/generation.hpp"

namespace cuset::cli {

void registerGenerateCommand(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<GenerateOptions>();
  auto noCache = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("generate", "Sample k kernels per problem from a model, as candidate JSONL for `cuset eval`");
  cmd->add_option("--model", o->modelDir, "HF model folder (config.json, model.safetensors, tokenizer.json)")->required();
  cmd->add_option("--problems", o->problemsDir, "Problem suite folder")->required();
  cmd->add_option("--out", o->outFile, "Candidate JSONL to write")->required();
  cmd->add_option("--samples,-k", o->samples, "Responses per problem")->capture_default_str();
  cmd->add_option("--temperature", o->temperature, "Sampling temperature (0: greedy)")->capture_default_str();
  cmd->add_option("--top-p", o->topP, "Nucleus sampling threshold")->capture_default_str();
  cmd->add_option("--max-new-tokens", o->maxNewTokens, "Tokens per response at most")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Sampling seed")->capture_default_str();
  cmd->add_option("--model-name", o->modelName, "Model name in the candidates (default: the folder name)");
  cmd->add_option("--threads", o->threads, "LibTorch threads (0: its default)");
  cmd->add_option("--device", o->device, "cpu, cuda or auto")->check(CLI::IsMember({"cpu", "cuda", "auto"}))->capture_default_str();
  cmd->add_flag("--bf16", o->bf16, "Run the model in bfloat16");
  cmd->add_option("--stop", o->stopStrings, "Stop strings: a response ends before the first one (repeatable)");
  cmd->add_flag("--no-kv-cache", *noCache, "Recompute the whole sequence each step (for comparison)");
  cmd->add_flag("--quiet,-q", *quiet, "No progress bar");
  cmd->callback([o, noCache, quiet, &context] {
    o->useKvCache = !*noCache;
    o->showProgress = !*quiet;
    const GenerateSummary s = runGeneration(*o);
    fmt::print("{} responses for {} problems, {} tokens in {:.1f} s ({:.0f} tokens/s) -> {}\n", s.responses, s.problems, s.generatedTokens,
               s.seconds, s.seconds > 0 ? static_cast<double>(s.generatedTokens) / s.seconds : 0.0, o->outFile.string());
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
