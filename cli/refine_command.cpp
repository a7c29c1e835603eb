// `cuset refine`: the FSR search loop over an endpoint or a checkpoint folder.
#include <fmt/format.h>

#include "commands.hpp"
#include "endpoint_options.hpp"
#include "cuset/refine/refine_loop.hpp"
#include <cstdint>

namespace cuset::cli {

void registerRefineCommand(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<RefineOptions>();
  auto model = std::make_shared<std::string>();
  auto prompt = std::make_shared<std::string>();
  auto feedback = std::make_shared<std::string>("full");
  auto seed = std::make_shared<std::uint64_t>(1);
  auto evalSeed = std::make_shared<std::uint64_t>(0);
  auto quiet = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("refine", "Search for correct, then faster, kernels in rounds judged by the evaluator (CUDA-LLM's FSR loop)");
  const auto flags = addEndpointOptions(cmd, o->endpoint);
  cmd->add_option("--model", *model, "HF model folder, or with --endpoint the served model's name")->required();
  cmd->add_option("--problems", o->problemsDir, "Problem suite folder")->required();
  cmd->add_option("--out", o->outDir, "Run folder")->required();
  cmd->add_option("--backend", o->backend, "sim (correctness only) or cuda (correctness, then performance rounds)")
      ->check(CLI::IsMember({"sim", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--candidates-per-round,-n", o->candidatesPerRound, "Candidates per problem per round (N)")->capture_default_str();
  cmd->add_option("--rounds", o->rounds, "Rounds at most (the depth D)")->capture_default_str();
  cmd->add_option("--patience", o->patience, "Stop a problem after this many rounds without improvement")->capture_default_str();
  cmd->add_option("--only", o->only, "Problem ids to search (default: the whole suite)");
  cmd->add_flag("--resume", o->resume, "Continue a run in --out; no finished request or judgement is repeated");
  cmd->add_option("--max-requests", o->maxRequests, "Stop when this many requests were sent (0: no limit)")->capture_default_str();
  cmd->add_option("--max-tokens-total", o->maxTokens, "Stop when this many tokens were spent (0: no limit)")->capture_default_str();
  cmd->add_option("--feedback", *feedback, "brief (verdict and reason) or full (+ compiler errors, mismatch statistics)")
      ->check(CLI::IsMember({"brief", "full"}))
      ->capture_default_str();
  cmd->add_option("--feedback-candidates", o->feedbackCandidates, "Failures shown to the model per round")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  cmd->add_option("--history", o->history, "Rounds of dialogue carried in the prompt")->check(CLI::Range(0, 100))->capture_default_str();
  cmd->add_option("--prompt", *prompt,
                  "Prompt style: cuset, kernelbench or kernelbench-native (default: cuset for a folder, kernelbench for an endpoint)")
      ->check(CLI::IsMember({"cuset", "kernelbench", "kernelbench-native"}));
  cmd->add_option("--kernelbench", o->promptContext.kernelbenchRoot,
                  "kernelbench-native: the KernelBench checkout whose prompt templates to use (default: the suite's import)");
  cmd->add_option("--temperature", o->endpoint.parameters.temperature, "Sampling temperature")->capture_default_str();
  cmd->add_option("--top-p", o->endpoint.parameters.topP, "Nucleus sampling threshold")->capture_default_str();
  cmd->add_option("--max-tokens", o->endpoint.parameters.maxTokens, "Tokens per response at most")->capture_default_str();
  auto* sampleSeed = cmd->add_option("--seed", *seed, "Sampling seed (endpoints: sent only when given)");
  cmd->add_option("--model-name", o->endpoint.modelLabel, "Model name in the candidates (default: the folder or served name)");
  cmd->add_option("--trials", o->trials, "Correctness trials per candidate")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--sizes", o->sizes, "Size set (default: small on sim, full on cuda)");
  cmd->add_option("--eval-seed", *evalSeed, "Input seed (default: random, recorded in refine-state.json)");
  cmd->add_option("--timer", o->cuda.timer, "cuda: cupti or events")->check(CLI::IsMember({"cupti", "events"}))->capture_default_str();
  cmd->add_option("--jobs,-j", o->jobs, "Parallel compiles (0 = one per core)");
  cmd->add_flag("--quiet,-q", *quiet, "No progress bars");
  cmd->callback([=, &context] {
    applyEndpointFlags(*flags, o->endpoint);
    const bool endpoint = flags->endpoint->count() > 0;
    if (endpoint) {
      o->endpoint.parameters.model = *model;
      if (sampleSeed->count() > 0) o->endpoint.parameters.seed = *seed;
    } else {
      o->checkpoint.modelDir = *model;
      o->checkpoint.modelName = o->endpoint.modelLabel;
      o->checkpoint.temperature = o->endpoint.parameters.temperature;
      o->checkpoint.topP = o->endpoint.parameters.topP;
      o->checkpoint.maxNewTokens = o->endpoint.parameters.maxTokens;
      o->checkpoint.seed = *seed;
    }
    o->prompt = prompt->empty() ? (endpoint ? PromptStyle::kernelbench : PromptStyle::cuset) : *parsePromptStyle(*prompt);
    o->promptContext.problemsDir = o->problemsDir;
    o->feedback = *feedback == "brief" ? FeedbackDetail::brief : FeedbackDetail::full;
    if (*evalSeed != 0) o->seed = *evalSeed;
    o->showProgress = !*quiet;
    const RefineSummary s = runRefine(*o);
    fmt::print("{}\n", s.table);
    fmt::print("{} of {} problems solved in {} round(s); {} requests, {} tokens{} -> {}\n", s.solved, s.problems, s.roundsRun, s.requests, s.tokens,
               s.budgetSpent ? " (budget spent)" : "", s.report.string());
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
