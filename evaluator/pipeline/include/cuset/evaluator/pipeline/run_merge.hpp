#pragma once
// `cuset merge RUN_DIR... --out DIR`: the shards of one sharded evaluation (`cuset eval --shard I/N`)
// into one run folder, as if one `cuset eval` had judged everything: results.jsonl holds every
// shard's records and run.json the common definition, seed and candidate set, with each shard's own
// record under "shards". Refuses, naming the difference, runs with other seeds, settings, suites or
// candidate sets, overlapping candidates, missing or unfinished shards. Rerunning it rewrites the
// same files (each atomically).
#include <filesystem>
#include <vector>

namespace cuset {

struct MergeSummary {
  std::size_t shards = 0;
  std::size_t candidates = 0;
};

MergeSummary mergeRuns(const std::vector<std::filesystem::path>& runs, const std::filesystem::path& outDir);

}  // namespace cuset
