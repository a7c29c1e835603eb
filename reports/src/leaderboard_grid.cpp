#include "leaderboard_grid.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cuset/reports/metrics.hpp"
#include "cuset/reports/renderers.hpp"

using nlohmann::json;

namespace cuset {
namespace {

// A model writes what it likes: one runaway answer must not make the page unopenable.
constexpr std::size_t kMaxSourceBytes = 64 * 1024;

constexpr std::string_view kCellOrder[] = {"correct",       "compiled",           "wrong_answer",   "runtime_error",     "timeout",
                                           "compile_error", "invalid_submission", "hack_suspected", "sandbox_violation", "unsupported"};

std::string cappedSource(const std::string& source) {
  if (source.size() <= kMaxSourceBytes) return source;
  return source.substr(0, kMaxSourceBytes) +
         fmt::format("\n\n[… {} more bytes left out of the leaderboard; the model's report has the whole source]", source.size() - kMaxSourceBytes);
}

json cellOf(const json& row) {
  json cell = {{"n", row.value("n", 0)}, {"c", row.value("c", 0)}, {"candidates", json::array()}};
  std::string best;
  const json verdicts = row.value("verdicts", json::object());  // named: items() of a temporary would dangle
  for (const auto& [verdict, count] : verdicts.items()) {
    if (count.get<int>() > 0 && (best.empty() || cellVerdictRank(verdict) < cellVerdictRank(best))) best = verdict;
  }
  cell["best"] = best;
  if (const json pk = row.value("pass_at_k", json::object()); pk.contains("1")) cell["pass_at_1"] = pk["1"];
  if (row.contains("best_speedup")) cell["best_speedup"] = row["best_speedup"];
  return cell;
}

}  // namespace

int cellVerdictRank(std::string_view verdict) {
  const auto it = std::find(std::begin(kCellOrder), std::end(kCellOrder), verdict);
  return static_cast<int>(it - std::begin(kCellOrder));
}

json leaderboardGrid(const LeaderboardInput& in, const std::vector<std::string>& models) {
  std::vector<const LeaderboardEntry*> entries;
  for (const auto& name : models) {
    const auto e = std::find_if(in.entries.begin(), in.entries.end(), [&](const LeaderboardEntry& x) { return x.name == name; });
    if (e != in.entries.end()) entries.push_back(&*e);
  }
  // Every problem any model was judged on, by id.
  std::map<std::string, json> problems;
  for (const auto* e : entries) {
    if (!e->summary.is_object() || !e->summary.contains("models") || !e->summary["models"].contains(e->name)) continue;
    const json rows = e->summary["models"][e->name].value("problems", json::object());
    for (const auto& [id, row] : rows.items()) {
      json& p = problems[id];
      if (p.is_null()) {
        p = {{"id", id}, {"level", row.value("level", 0)}, {"tags", json::array()}, {"solved_by", json::array()}, {"cells", json::object()}};
        if (in.problems.contains(id)) {
          const json& statement = in.problems[id];
          p["name"] = statement.value("name", "");
          p["description"] = statement.value("description", "");
          p["tags"] = statement.value("tags", json::array());
        }
        if (row.contains("origin")) p["origin"] = originText(row["origin"]);
      }
      if (row.contains("excluded")) p["excluded"] = row["excluded"];
      json cell = cellOf(row);
      if (cell["c"].get<int>() > 0) p["solved_by"].push_back(e->name);
      p["cells"][e->name] = std::move(cell);
    }
  }
  // The candidates behind each cell, sources stored once (samples often repeat an answer).
  json candidates = json::array(), sources = json::object();
  for (const auto* e : entries) {
    std::vector<const EvalResult*> ordered;
    for (const auto& r : e->results) ordered.push_back(&r);
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const EvalResult* a, const EvalResult* b) { return std::tie(a->problem, a->sample) < std::tie(b->problem, b->sample); });
    for (const EvalResult* r : ordered) {
      const auto p = problems.find(r->problem);
      if (p == problems.end() || !p->second["cells"].contains(e->name)) continue;
      const std::string key = r->sourceHash.empty() ? fmt::format("candidate-{}", candidates.size()) : r->sourceHash;
      if (!sources.contains(key)) sources[key] = cappedSource(r->source);
      json c = {{"model", e->name},    {"problem", r->problem}, {"sample", r->sample}, {"verdict", verdictName(r->verdict)},
                {"reason", r->reason}, {"source", key}};
      if (const auto s = speedupOf(*r)) c["speedup"] = *s;
      if (!r->libraryOps.empty()) c["library_ops"] = r->libraryOps;
      p->second["cells"][e->name]["candidates"].push_back(candidates.size());
      candidates.push_back(std::move(c));
    }
  }
  json list = json::array(), statements = json::object();
  for (auto& [id, p] : problems) {
    if (in.problems.contains(id) && in.problems[id].contains("statement")) statements[id] = in.problems[id]["statement"];
    list.push_back(std::move(p));
  }
  return {
      {"problems", std::move(list)}, {"candidates", std::move(candidates)}, {"sources", std::move(sources)}, {"statements", std::move(statements)}};
}

json headToHead(const json& problems, const std::vector<std::string>& models) {
  json out = json::array();
  for (std::size_t i = 0; i < models.size(); ++i) {
    for (std::size_t j = i + 1; j < models.size(); ++j) {
      const std::string& a = models[i];
      const std::string& b = models[j];
      json aOnly = json::array(), bOnly = json::array(), ratios = json::object();
      int both = 0, neither = 0;
      std::vector<double> ratioValues;
      for (const auto& p : problems) {
        if (p.contains("excluded") || !p["cells"].contains(a) || !p["cells"].contains(b)) continue;
        const json& ca = p["cells"][a];
        const json& cb = p["cells"][b];
        const bool sa = ca["c"].get<int>() > 0, sb = cb["c"].get<int>() > 0;
        if (sa && !sb) aOnly.push_back(p["id"]);
        if (sb && !sa) bOnly.push_back(p["id"]);
        if (!sa && !sb) ++neither;
        if (!(sa && sb)) continue;
        ++both;
        if (ca.contains("best_speedup") && cb.contains("best_speedup") && cb["best_speedup"].get<double>() > 0) {
          const double r = ca["best_speedup"].get<double>() / cb["best_speedup"].get<double>();
          ratios[p["id"].get<std::string>()] = r;
          ratioValues.push_back(r);
        }
      }
      json pair = {{"a", a}, {"b", b}, {"a_only", std::move(aOnly)}, {"b_only", std::move(bOnly)}, {"both", both}, {"neither", neither}};
      if (const auto g = geometricMean(ratioValues)) {
        pair["speedup_ratio"] = {{"geomean", *g}, {"problems", ratioValues.size()}, {"per_problem", std::move(ratios)}};
      }
      out.push_back(std::move(pair));
    }
  }
  return out;
}

}  // namespace cuset
