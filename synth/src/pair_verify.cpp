#include "cuset/synth/pair_verify.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuset::synth {
namespace {

struct Pair {
  std::string line;  // as given, written back unchanged when accepted
  std::string problem;
  std::string response;
};

// The response of a pair: `response`, or the last assistant message.
std::vector<Pair> readPairs(const fs::path& path) {
  std::vector<Pair> pairs;
  forEachJsonlLine(path, "pairs file", [&](const std::string& line, const std::string& where) {
    json j;
    try {
      j = json::parse(validUtf8(line));
    } catch (const json::exception& e) {
      throw makeError("{}: not JSON: {}", where, e.what());
    }
    Pair p{line, j.value("problem", ""), j.value("response", "")};
    if (p.response.empty() && j.contains("messages") && j["messages"].is_array()) {
      for (const auto& m : j["messages"]) {
        if (m.value("role", "") == "assistant") p.response = m.value("content", "");
      }
    }
    if (p.problem.empty()) throw makeError("{}: no 'problem' (the id of the problem the response solves)", where);
    if (p.response.empty()) throw makeError("{}: no 'response' and no assistant message", where);
    pairs.push_back(std::move(p));
  });
  return pairs;
}

}  // namespace

VerifySummary runVerifyPairs(const VerifyOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Pair> pairs = readPairs(o.pairs);
  const fs::path stem = o.out.parent_path() / o.out.stem();
  const fs::path work = fs::path(stem.string() + ".verify");
  fs::create_directories(work);
  std::string candidates;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    candidates += json{{"problem", pairs[i].problem}, {"sample", i}, {"model", "pairs"}, {"response", pairs[i].response}}.dump() + "\n";
  }
  writeFileAtomic(work / "candidates.jsonl", candidates);

  // Both candidate forms: a /*@cuset kernel, or a KernelBench solution recorded into a plan.
  EvalConfig eval;
  eval.problemsDir = o.problems;
  eval.candidatesPath = work / "candidates.jsonl";
  eval.outDir = work / "run";
  eval.backend = BackendKind::sim;
  eval.seed = o.seed;
  eval.trials = o.trials;
  eval.jobs = o.jobs;
  eval.resume = fs::exists(eval.outDir / "results.jsonl");
  eval.showProgress = o.showProgress;
  if (!o.cacheDir.empty()) eval.cacheDir = o.cacheDir;
  eval.commandLine = {"cuset", "data", "verify", o.pairs.string()};
  log::info("data verify: judging {} responses on the sim backend", pairs.size());
  const EvalRunSummary verified = runEvaluation(eval);

  std::map<std::int64_t, const EvalResult*> bySample;
  for (const auto& r : verified.results) bySample[r.sample] = &r;
  VerifySummary s;
  s.pairs = pairs.size();
  s.run = eval.outDir;
  std::string accepted;
  json rejects = json::array(), verdicts = json::object();
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto it = bySample.find(static_cast<std::int64_t>(i));
    const std::string verdict = it == bySample.end() ? "missing" : std::string(verdictName(it->second->verdict));
    verdicts[verdict] = verdicts.value(verdict, 0) + 1;
    if (verdict == "correct") {
      accepted += pairs[i].line + "\n";
      ++s.accepted;
      continue;
    }
    rejects.push_back({{"line", i + 1},
                       {"problem", pairs[i].problem},
                       {"verdict", verdict},
                       {"form", it == bySample.end() ? "" : it->second->form},
                       {"reason", it == bySample.end() ? "" : it->second->reason.substr(0, 300)}});
  }
  s.rejected = pairs.size() - s.accepted;
  if (!o.out.parent_path().empty()) fs::create_directories(o.out.parent_path());
  writeFileAtomic(o.out, accepted);
  s.report = fs::path(stem.string() + ".verify.json");
  writeFileAtomic(s.report, json{{"pairs", o.pairs.string()},
                                 {"problems", o.problems.string()},
                                 {"accepted", s.accepted},
                                 {"rejected", s.rejected},
                                 {"verdicts", verdicts},
                                 {"trials", o.trials},
                                 {"seed", std::to_string(o.seed)},
                                 {"run", eval.outDir.string()},
                                 {"rejects", rejects}}
                                    .dump(2) +
                                "\n");
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace cuset::synth
