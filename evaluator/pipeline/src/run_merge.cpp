#include "cuset/evaluator/pipeline/run_merge.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/evaluator/results/eval_result.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuset {
namespace {

struct ShardRun {
  fs::path dir;
  json run;
  std::vector<std::string> lines;  // results.jsonl records, as written
  std::vector<std::string> keys;
};

ShardRun readShard(const fs::path& dir) {
  ShardRun s{dir, {}, {}, {}};
  const fs::path runJson = dir / "run.json";
  if (!fs::exists(runJson)) throw makeError("{}: not a run folder (no run.json)", dir.string());
  s.run = readJsonFile(runJson);
  const std::string status = s.run.value("status", "");
  if (status != "finished") {
    throw makeError("{}: not finished (status {}); finish it with `cuset eval ... --resume` first", dir.string(),
                    status.empty() ? "unknown" : status);
  }
  if (!s.run.contains("shard")) throw makeError("{}: not a shard (made without `cuset eval --shard I/N`)", dir.string());
  forEachJsonlLine(dir / "results.jsonl", "results file", [&](const std::string& line, const std::string& where) {
    EvalResult r;
    try {
      r = evalResultFromJson(json::parse(line));
    } catch (const std::exception& e) {
      throw makeError("{}: {}; resume that shard to repair it before merging", where, e.what());
    }
    s.keys.push_back(r.key());
    s.lines.push_back(line);
  });
  return s;
}

// The definition every shard must share: all of it but the shard's own index.
json commonDefinition(const json& run) {
  json d = run.value("definition", json::object());
  d.erase("shard");
  return d;
}

}  // namespace

MergeSummary mergeRuns(const std::vector<fs::path>& runs, const fs::path& outDir) {
  if (runs.empty()) throw Error("cuset merge: give the shard run folders to merge");
  std::vector<ShardRun> shards;
  for (const auto& dir : runs) {
    if (fs::exists(outDir) && fs::exists(dir) && fs::equivalent(dir, outDir))
      throw makeError("--out {} is one of the runs to merge", outDir.string());
    shards.push_back(readShard(dir));
  }
  const ShardRun& first = shards.front();
  const json definition = commonDefinition(first.run);
  const std::size_t count = first.run["shard"].value("count", std::size_t{0});
  std::map<std::size_t, const ShardRun*> byIndex;
  std::map<std::string, const ShardRun*> owner;
  for (const auto& s : shards) {
    if (s.run.value("seed", "") != first.run.value("seed", "")) {
      throw makeError("{} has seed {} but {} has seed {}: shards must draw the same inputs (`cuset eval --shard I/N --seed S`)", s.dir.string(),
                      s.run.value("seed", ""), first.dir.string(), first.run.value("seed", ""));
    }
    const json d = commonDefinition(s.run);
    if (d != definition) {
      std::vector<std::string> changed;
      for (const auto& [key, value] : definition.items()) {
        if (!d.contains(key) || d[key] != value)
          changed.push_back(fmt::format("{} {} vs {}", key, dumpJson(value), d.contains(key) ? dumpJson(d[key]) : "none"));
      }
      for (const auto& [key, value] : d.items()) {
        if (!definition.contains(key)) changed.push_back(fmt::format("{} none vs {}", key, dumpJson(value)));
      }
      throw makeError("{} and {} were judged differently ({}): not shards of one evaluation", first.dir.string(), s.dir.string(),
                      fmt::format("{}", fmt::join(changed, ", ")));
    }
    if (s.run.value("candidate_set", json()) != first.run.value("candidate_set", json())) {
      throw makeError("{} and {} judged different candidate sets (fingerprint {} vs {})", first.dir.string(), s.dir.string(),
                      first.run["candidate_set"].value("fingerprint", "?"), s.run["candidate_set"].value("fingerprint", "?"));
    }
    const std::size_t index = s.run["shard"].value("index", std::size_t{0});
    if (s.run["shard"].value("count", std::size_t{0}) != count) {
      throw makeError("{} is a shard of {} but {} of {}", s.dir.string(), s.run["shard"].value("count", 0), first.dir.string(), count);
    }
    if (const auto [it, fresh] = byIndex.emplace(index, &s); !fresh) {
      throw makeError("{} and {} are both shard {}/{}", it->second->dir.string(), s.dir.string(), index, count);
    }
    for (const auto& key : s.keys) {
      if (const auto [it, fresh] = owner.emplace(key, &s); !fresh) {
        std::string shown = key;
        std::replace(shown.begin(), shown.end(), '\x1f', ' ');
        throw makeError("candidate '{}' is in both {} and {}", shown, it->second->dir.string(), s.dir.string());
      }
    }
  }
  for (std::size_t i = 1; i <= count; ++i) {
    if (!byIndex.contains(i)) throw makeError("shard {}/{} is missing: merge all {} shards", i, count, count);
  }
  const std::size_t total = first.run["candidate_set"].value("candidates", std::size_t{0});
  if (owner.size() != total) throw makeError("the shards judged {} of the {} candidates", owner.size(), total);

  fs::create_directories(outDir);
  std::string results;
  json merged = first.run;
  merged.erase("shard");
  merged["definition"] = definition;
  merged["shards"] = json::array();
  merged["candidates_total"] = total;
  std::map<std::string, std::size_t> counts;
  for (const auto& [index, s] : byIndex) {
    for (const auto& line : s->lines) results += line + "\n";
    merged["shards"].push_back({{"index", index},
                                {"dir", fs::absolute(s->dir).string()},
                                {"started", s->run.value("started", "")},
                                {"finished", s->run.value("finished", "")},
                                {"host", s->run.value("environment", json::object()).value("host", "")},
                                {"problems", s->run["shard"].value("problems", json::array())}});
    const json shardCounts = s->run.value("verdict_counts", json::object());  // items() of a temporary would dangle
    for (const auto& [verdict, n] : shardCounts.items()) counts[verdict] += n.get<std::size_t>();
    merged["started"] = std::min(merged.value("started", ""), s->run.value("started", ""));
    merged["finished"] = std::max(merged.value("finished", ""), s->run.value("finished", ""));
  }
  merged["verdict_counts"] = counts;
  writeFileAtomic(outDir / "results.jsonl", results);
  writeJsonFileAtomic(outDir / "run.json", merged);
  return {shards.size(), total};
}

}  // namespace cuset
