#include "cuset/reports/run_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

namespace cuset {
namespace {

constexpr double kZCritical = 1.96;       // two-sided 95%
constexpr double kMinTimingNoise = 0.01;  // below 1% a change is never called significant

struct Judgement {
  std::string status;
  std::string why;
};

// Identical sources judged in both runs: a flip is a deterministic change (of the harness, the
// environment or the GPU), not sampling noise.
std::pair<int, int> sourceFlips(const nlohmann::json& base, const nlohmann::json& current) {
  int lost = 0, gained = 0;
  if (!base.contains("sources") || !current.contains("sources")) return {0, 0};
  for (const auto& [hash, verdict] : base["sources"].items()) {
    if (!current["sources"].contains(hash)) continue;
    const bool was = verdict == "correct", is = current["sources"][hash] == "correct";
    lost += was && !is;
    gained += !was && is;
  }
  return {lost, gained};
}

Judgement judgeCorrectness(std::int64_t nb, std::int64_t cb, std::int64_t nc, std::int64_t cc, std::pair<int, int> flips) {
  const std::string rates = fmt::format("{}/{} -> {}/{} correct", cb, nb, cc, nc);
  if (flips.first > 0) return {"worse", fmt::format("{} ({} identical candidate(s) no longer correct)", rates, flips.first)};
  if (cb > 0 && cc == 0) return {"worse", rates + " (no longer solved)"};
  if (cb == 0 && cc > 0) return {"better", rates + " (newly solved)"};
  const double pb = static_cast<double>(cb) / static_cast<double>(nb), pc = static_cast<double>(cc) / static_cast<double>(nc);
  if (pb == pc) return {"same", rates};
  const double p = static_cast<double>(cb + cc) / static_cast<double>(nb + nc);
  const double se = std::sqrt(p * (1 - p) * (1.0 / static_cast<double>(nb) + 1.0 / static_cast<double>(nc)));
  const double z = se > 0 ? (pc - pb) / se : 0.0;
  if (std::abs(z) >= kZCritical) return {z > 0 ? "better" : "worse", fmt::format("{} (z = {:.2f})", rates, z)};
  if (flips.second > 0 && pc > pb) return {"better", fmt::format("{} ({} identical candidate(s) now correct)", rates, flips.second)};
  return {"ambiguous", fmt::format("{} (z = {:.2f}, not significant)", rates, z)};
}

std::optional<Judgement> judgeTiming(const nlohmann::json& base, const nlohmann::json& current, nlohmann::json& out) {
  if (!base.contains("fastest") || !current.contains("fastest")) return std::nullopt;
  const double b = base["fastest"].value("median_ms", 0.0), c = current["fastest"].value("median_ms", 0.0);
  if (!(b > 0) || !(c > 0)) return std::nullopt;
  const double change = (c - b) / b;
  out = {{"base_ms", b}, {"current_ms", c}, {"change", change}};
  if (!base["fastest"].contains("noise") || !current["fastest"].contains("noise")) {
    out["status"] = std::abs(change) < kMinTimingNoise ? "same" : "ambiguous";
    return Judgement{out["status"], fmt::format("{:+.1f}% time, noise unknown", 100 * change)};
  }
  const double noise = std::max({base["fastest"]["noise"].get<double>(), current["fastest"]["noise"].get<double>(), kMinTimingNoise});
  out["noise"] = noise;
  std::string status = "same";
  if (change > noise)
    status = "worse";
  else if (change < -noise)
    status = "better";
  out["status"] = status;
  return Judgement{status, fmt::format("{:+.1f}% time (noise {:.1f}%)", 100 * change, 100 * noise)};
}

}  // namespace

nlohmann::json compareSummaries(const nlohmann::json& base, const nlohmann::json& current, const std::string& baseLabel) {
  nlohmann::json rows = nlohmann::json::array();
  std::map<std::string, int> counts = {{"better", 0}, {"worse", 0}, {"same", 0}, {"ambiguous", 0}, {"new", 0}, {"missing", 0}, {"not_judged", 0}};
  std::set<std::pair<std::string, std::string>> keys;
  for (const auto* s : {&base, &current}) {
    if (!s->contains("models")) continue;
    for (const auto& [model, m] : (*s)["models"].items()) {
      if (!m.contains("problems")) continue;
      for (const auto& [problem, row] : m["problems"].items()) keys.insert({model, problem});
    }
  }
  auto find = [](const nlohmann::json& s, const std::string& model, const std::string& problem) -> const nlohmann::json* {
    if (!s.contains("models") || !s["models"].contains(model)) return nullptr;
    const auto& problems = s["models"][model]["problems"];
    return problems.contains(problem) ? &problems[problem] : nullptr;
  };
  for (const auto& [model, problem] : keys) {
    const nlohmann::json* b = find(base, model, problem);
    const nlohmann::json* c = find(current, model, problem);
    nlohmann::json row = {{"model", model}, {"problem", problem}};
    if (!b || !c) {
      row["status"] = b ? "missing" : "new";
      row["why"] = b ? "not in this run" : "not in the base run";
      ++counts[row["status"]];
      rows.push_back(row);
      continue;
    }
    // A problem whose candidates were all unsupported in one run (a kernel the simulator cannot run,
    // a reference that fails) was not judged there: nothing to compare, and no rate to divide by.
    if ((*b)["n"].get<std::int64_t>() == 0 || (*c)["n"].get<std::int64_t>() == 0) {
      row["status"] = "not_judged";
      row["why"] = fmt::format("only unsupported candidates in the {} run", (*b)["n"].get<std::int64_t>() == 0 ? "base" : "this");
      ++counts[row["status"]];
      rows.push_back(row);
      continue;
    }
    const Judgement correctness = judgeCorrectness((*b)["n"], (*b)["c"], (*c)["n"], (*c)["c"], sourceFlips(*b, *c));
    row["correctness"] = {{"base", fmt::format("{}/{}", (*b)["c"].get<int>(), (*b)["n"].get<int>())},
                          {"current", fmt::format("{}/{}", (*c)["c"].get<int>(), (*c)["n"].get<int>())},
                          {"status", correctness.status}};
    Judgement overall = correctness;
    nlohmann::json timing;
    if (auto t = judgeTiming(*b, *c, timing)) {
      row["timing"] = timing;
      if (correctness.status == "same")
        overall = {t->status, correctness.why + "; " + t->why};
      else
        overall.why += "; " + t->why;
    }
    row["status"] = overall.status;
    row["why"] = overall.why;
    ++counts[overall.status];
    rows.push_back(row);
  }
  // Regressions first, then improvements, so the table reads top-down by urgency.
  static const std::map<std::string, int> order = {{"worse", 0}, {"ambiguous", 1},  {"missing", 2}, {"better", 3},
                                                   {"new", 4},   {"not_judged", 5}, {"same", 6}};
  std::stable_sort(rows.begin(), rows.end(), [](const nlohmann::json& x, const nlohmann::json& y) {
    return order.at(x["status"].get<std::string>()) < order.at(y["status"].get<std::string>());
  });
  return {{"base", baseLabel}, {"counts", counts}, {"rows", rows}};
}

bool hasRegression(const nlohmann::json& comparison) { return comparison.value("counts", nlohmann::json::object()).value("worse", 0) > 0; }

}  // namespace cuset
