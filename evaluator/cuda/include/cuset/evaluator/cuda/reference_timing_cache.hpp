#pragma once
// The reference's GPU timing, measured once per (problem, size set, GPU, driver, LibTorch, timing rule)
// and kept, as KernelBench keeps its results/timing/<hardware>/ baselines: every later candidate of the
// problem, in this run and in later runs on the same kind of machine, is compared with the same
// measurement instead of paying for (and adding noise from) a new one. `--retime-reference` measures
// again and replaces the entry. Files live under DIR/<hardware>/, one per key; a file that does not
// parse or names another key is a miss (the cache is never trusted over a measurement).
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace cuset {

struct Problem;

struct ReferenceTimingKey {
  std::string problem;      // its id ("level1/relu")
  std::string problemHash;  // of problem.yaml and the size set's reference archive: an edited problem is a new key
  std::string sizeSet;
  std::string device;  // the GPU's name
  int driverVersion = 0;
  std::string torch;   // LibTorch's version
  std::string timing;  // the timer and the stopping rule, as the worker gets them

  nlohmann::json toJson() const;
  std::string hex() const;  // the file name's hash of all the fields
};

class ReferenceTimingCache {
 public:
  // `dir` empty: kept for this process only.
  explicit ReferenceTimingCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // A key with its problem part filled in: the problem's id and the hash of what defines its reference
  // at `sizeSet` (hashed once per problem and set).
  ReferenceTimingKey keyFor(const Problem& problem, const std::string& sizeSet);
  // The worker's timing object of the reference (samples_ms, event_samples_ms, kind, ...) with
  // "measured_at" added, or nullopt.
  std::optional<nlohmann::json> find(const ReferenceTimingKey& key);
  // Keeps `timing` (a reference timing with samples) for `key`; a failure to write is only logged.
  void store(const ReferenceTimingKey& key, const nlohmann::json& timing);
  // The file an entry for `key` lives in (empty `dir`: empty path).
  std::filesystem::path fileFor(const ReferenceTimingKey& key) const;

 private:
  std::filesystem::path dir_;
  std::mutex mutex_;
  std::map<std::string, nlohmann::json> memory_;
  std::map<std::pair<std::string, std::string>, std::string> problemHashes_;  // (folder, size set) -> hash
};

}  // namespace cuset
