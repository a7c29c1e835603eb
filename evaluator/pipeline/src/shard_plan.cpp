#include "cuset/evaluator/pipeline/shard_plan.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "cuset/common/hash.hpp"

namespace cuset {

std::optional<Shard> parseShard(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  Shard s;
  const auto parse = [](std::string_view part, std::size_t& out) {
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return ec == std::errc() && end == part.data() + part.size();
  };
  if (!parse(text.substr(0, slash), s.index) || !parse(text.substr(slash + 1), s.count)) return std::nullopt;
  if (s.count < 1 || s.count > 10000 || s.index < 1 || s.index > s.count) return std::nullopt;
  return s;
}

double estimatedProblemCost(const Problem& problem, std::size_t candidates, const std::string& sizeSet) {
  const double work = static_cast<double>(problem.flopsAt(sizeSet).value_or(0) + problem.bytesAt(sizeSet).value_or(0));
  return static_cast<double>(candidates) * (1.0 + std::log2(1.0 + work / 1e6));
}

std::set<std::string> shardProblems(const std::vector<Candidate>& candidates, const ProblemSuite& suite, const std::string& sizeSet, Shard shard) {
  std::map<std::string, std::size_t> perProblem;
  for (const auto& c : candidates) ++perProblem[c.problemId];
  std::vector<std::pair<double, std::string>> costs;
  for (const auto& [id, n] : perProblem) {
    const Problem* p = suite.find(id);
    costs.emplace_back(p ? estimatedProblemCost(*p, n, sizeSet) : static_cast<double>(n), id);
  }
  std::sort(costs.begin(), costs.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::vector<double> load(shard.count, 0.0);
  std::set<std::string> mine;
  for (const auto& [cost, id] : costs) {
    const auto least = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());  // first of equals
    load[least] += cost;
    if (least + 1 == shard.index) mine.insert(id);
  }
  return mine;
}

std::string candidateSetFingerprint(const std::vector<Candidate>& candidates) {
  std::vector<std::string> entries;
  for (const auto& c : candidates) entries.push_back(c.key() + "\x1e" + (c.readError.empty() ? hashString(c.source).hex() : "error:" + c.readError));
  std::sort(entries.begin(), entries.end());
  ContentHasher hasher;
  for (const auto& e : entries) hasher.add(e);
  return hasher.digest().hex();
}

}  // namespace cuset
