#include "cuset/evaluator/cuda/reference_timing_cache.hpp"

#include <fmt/format.h>

#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/evaluator/problem/problem.hpp"

namespace fs = std::filesystem;

namespace cuset {
nlohmann::json ReferenceTimingKey::toJson() const {
  return {{"problem", problem}, {"problem_hash", problemHash},     {"size_set", sizeSet},
          {"device", device},   {"driver_version", driverVersion}, {"torch", torch},
          {"timing", timing}};
}

std::string ReferenceTimingKey::hex() const { return hashString(toJson().dump()).hex(); }

ReferenceTimingKey ReferenceTimingCache::keyFor(const Problem& problem, const std::string& sizeSet) {
  ReferenceTimingKey key;
  key.problem = problem.id;
  key.sizeSet = sizeSet;
  const std::scoped_lock lock(mutex_);
  std::string& hash = problemHashes_[{problem.directory.string(), sizeSet}];
  if (!hash.empty()) {
    key.problemHash = hash;
    return key;
  }
  ContentHasher hasher;
  hasher.add(readFile(problem.directory / "problem.yaml"));
  if (problem.referenceArchive) {
    if (auto archive = problem.referenceArchive->archives.find(sizeSet); archive != problem.referenceArchive->archives.end()) {
      const std::vector<std::byte> bytes = readBinaryFile(problem.directory / archive->second);
      hasher.add(bytes.data(), bytes.size());
    }
  }
  hash = key.problemHash = hasher.digest().hex();
  return key;
}

fs::path ReferenceTimingCache::fileFor(const ReferenceTimingKey& key) const {
  if (dir_.empty()) return {};
  return dir_ / pathComponentOf(key.device) / fmt::format("{}-{}.json", pathComponentOf(key.problem), key.hex().substr(0, 16));
}

std::optional<nlohmann::json> ReferenceTimingCache::find(const ReferenceTimingKey& key) {
  const std::string hex = key.hex();
  const std::scoped_lock lock(mutex_);
  if (auto it = memory_.find(hex); it != memory_.end()) return it->second;
  const fs::path file = fileFor(key);
  std::error_code ec;
  if (file.empty() || !fs::exists(file, ec)) return std::nullopt;
  try {
    const nlohmann::json entry = readJsonFile(file);
    // The file name holds a prefix of the hash only: the whole key must match.
    if (!entry.is_object() || entry.value("key", nlohmann::json()) != key.toJson() || !entry.contains("timing") ||
        entry["timing"].value("samples_ms", std::vector<double>{}).empty()) {
      log::warn("{}: not a reference timing for this key; the reference is timed again", file.string());
      return std::nullopt;
    }
    nlohmann::json timing = entry["timing"];
    timing["measured_at"] = entry.value("measured_at", "");
    memory_[hex] = timing;
    return timing;
  } catch (const std::exception& e) {
    log::warn("{}; the reference is timed again", e.what());
    return std::nullopt;
  }
}

void ReferenceTimingCache::store(const ReferenceTimingKey& key, const nlohmann::json& timing) {
  nlohmann::json entry = {{"key", key.toJson()}, {"measured_at", utcTimestamp()}, {"timing", timing}};
  const std::scoped_lock lock(mutex_);
  nlohmann::json kept = timing;
  kept["measured_at"] = entry["measured_at"];
  memory_[key.hex()] = std::move(kept);
  const fs::path file = fileFor(key);
  if (file.empty()) return;
  try {
    fs::create_directories(file.parent_path());
    writeFileAtomic(file, entry.dump(2) + "\n");
  } catch (const std::exception& e) {
    log::warn("keeping the reference timing of {}: {} (it is timed again next run)", key.problem, e.what());
  }
}

}  // namespace cuset
