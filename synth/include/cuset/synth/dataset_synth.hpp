#pragma once
// `cuset data synth`: verified instruction/response pairs from op families, plus held-out evaluation
// problems (unseen instances of the training families and whole unseen families) and a dataset card.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace cuset::synth {

struct SynthInstance;

struct SynthOptions {
  std::filesystem::path out;          // training JSONL
  std::vector<std::string> families;  // training families; empty: every family not held out
  std::vector<std::string> heldoutFamilies{"norm", "scan"};
  std::size_t perFamily = 100;  // training samples per family (before rejects)
  std::uint64_t seed = 1;
  double heldoutVariantFraction = 0.15;  // of each training family's variants, never trained on
  std::size_t heldoutInstances = 12;     // new instances (sizes, names) of trained variants
  std::size_t heldoutVariants = 12;      // problems from held-out variants, at most
  std::size_t heldoutPerFamily = 4;      // problems per unseen family
  double canonicalPromptShare = 0.6;     // instructions worded exactly like `cuset generate`'s prompt
  int trials = 3;                        // sim correctness trials per response
  std::size_t jobs = 0;
  std::filesystem::path cacheDir;  // compile cache (empty: the default)
  bool showProgress = true;
  // Applied to every generated instance before verification; tests use it to plant faults that the
  // verification must catch.
  std::function<void(SynthInstance&)> alterInstance;
};

// Everything `runSynth` writes, derived from `out` (data/synth.jsonl -> data/synth.card.json, ...).
struct SynthPaths {
  std::filesystem::path train;
  std::filesystem::path cardJson;
  std::filesystem::path cardMarkdown;
  std::filesystem::path heldoutDir;  // a problem suite: level1/<name>/problem.yaml + solutions/, and heldout.json
  std::filesystem::path verifyDir;   // the verification run (problems, candidates, results), kept for inspection
  static SynthPaths forOutput(const std::filesystem::path& out);
};

struct SynthSummary {
  SynthPaths paths;
  std::size_t samples = 0;
  std::size_t rejected = 0;
  std::size_t heldoutProblems = 0;
  double seconds = 0.0;
};

SynthSummary runSynth(const SynthOptions& options);

// Held-out problems that also occur in the training data: by problem text (description + reference)
// for every set, and by variant key for the unseen-variant and unseen-family sets. Empty when clean.
std::vector<std::string> findHeldoutLeaks(const std::filesystem::path& trainFile, const std::filesystem::path& heldoutDir);

}  // namespace cuset::synth
