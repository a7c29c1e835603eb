#pragma once
// `cuset loop --config FILE`: which data, which model and training recipe, which objectives and seeds,
// how to sample and how to evaluate. Every error names the file, the field and the line.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cuset/synth/dataset_synth.hpp"

namespace cuset {

struct LoopObjective {
  std::string name;  // row label and run-folder prefix: "sft", "cuset", "cuset-q0.3"
  YAML::Node block;  // the `objective:` block given to `cuset train`
};

// An optional shared warm start: one training run on the same data before the objectives, which then
// continue from it. It exists for small models trained from scratch, which need far more steps to
// learn to read a prompt than each objective run can afford (docs/cli-loop.md).
struct LoopBase {
  std::int64_t steps = 0;
  std::uint64_t seed = 0;
  std::string lr;        // as written (so the run's YAML shows it unchanged); empty: train.optimizer.lr
  YAML::Node objective;  // default {type: sft}
};

struct LoopConfig {
  std::filesystem::path source;  // the YAML file
  std::string name;
  std::filesystem::path outDir;
  std::vector<std::uint64_t> seeds;
  // Data: synthesised by the loop (`data.synth`), or given (`data.train` + `data.heldout`).
  std::optional<synth::SynthOptions> synth;
  std::filesystem::path trainData;
  std::filesystem::path heldoutDir;
  // Training: a `cuset train` config without seed, objective and data.train (the loop sets those).
  YAML::Node train;
  std::vector<LoopObjective> objectives;
  std::optional<LoopBase> base;
  bool baseline = true;  // evaluate the untrained starting model as well
  // Sampling
  int samples = 4;
  double temperature = 0.8;
  double topP = 0.95;
  int maxNewTokens = 512;
  std::string device = "auto";
  bool bf16 = false;
  int threads = 0;
  // Evaluation
  std::string backend = "sim";
  int trials = 3;
  std::uint64_t evalSeed = 1;
  std::string sizes;  // empty: the backend's default
  std::string timer = "cupti";
  double maxTimingSeconds = 2.0;
  std::size_t jobs = 0;

  static LoopConfig load(const std::filesystem::path& path);

  // The `cuset train` YAML of one run: the train block with seed, objective and data.train filled in
  // and relative paths made absolute, so the file stands on its own.
  // With `warmStart`, the run starts from that model folder (and its tokenizer) instead of train.model.
  std::string trainYaml(const LoopObjective& objective, std::uint64_t seed, const std::filesystem::path& dataFile,
                        const std::filesystem::path& warmStart = {}) const;
  // The shared warm-start run's config (requires `base`).
  std::string baseTrainYaml(const std::filesystem::path& dataFile) const;
  // `--model DIR`: train from (and take the baseline from) this HF folder instead of train.model.
  void overrideModelPath(const std::filesystem::path& modelDir);
  // True when training starts from a pretrained folder (the baseline is that folder itself).
  bool pretrained() const;

 private:
  // `t` is a clone of `train` that this call may change.
  std::string renderTrainYaml(YAML::Node t, const LoopObjective& objective, std::uint64_t seed, const std::filesystem::path& dataFile,
                              const std::filesystem::path& warmStart) const;
};

}  // namespace cuset
