#pragma once
// runs/<run>/results.jsonl: one record per finished candidate, appended with a single write(2) as it
// finishes, so a killed run loses nothing finished and --resume skips it.
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cuset/evaluator/results/eval_result.hpp"

namespace cuset {

class ResultsLog {
 public:
  // Without `resume`, an existing non-empty file is an error (results are never overwritten). With it,
  // the finished records are loaded; a torn last line (a crash mid-write) is cut off with a warning.
  ResultsLog(std::filesystem::path path, bool resume);
  ~ResultsLog();
  ResultsLog(const ResultsLog&) = delete;
  ResultsLog& operator=(const ResultsLog&) = delete;

  bool contains(const std::string& key) const;
  const std::vector<EvalResult>& previousResults() const { return previous_; }
  // Thread-safe.
  void append(const EvalResult& result);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::vector<EvalResult> previous_;
  std::set<std::string> done_;
  mutable std::mutex mutex_;
};

}  // namespace cuset
