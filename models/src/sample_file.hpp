#pragma once
// The candidate JSONL of an endpoint run, as a crash-safe log: finished samples are appended one line
// at a time (a kill leaves at most a torn last line), and a resumed run keeps exactly the records
// whose request key it would send again. Records of other requests are moved to FILE.replaced.jsonl,
// never deleted.
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace cuset {

class SampleFile {
 public:
  // (problem, sample) -> the request key the run would send for it now.
  using Plan = std::map<std::pair<std::string, std::int64_t>, std::string>;

  // Without `resume`, a non-empty existing file is an error (nothing written is overwritten).
  SampleFile(std::filesystem::path path, const Plan& plan, bool resume);
  ~SampleFile();
  SampleFile(const SampleFile&) = delete;
  SampleFile& operator=(const SampleFile&) = delete;

  bool finished(const std::string& problem, std::int64_t sample) const { return kept_.contains({problem, sample}); }
  std::size_t kept() const { return kept_.size(); }
  std::size_t replaced() const { return replaced_; }
  // One JSON record (no newline), written with one write(2) under a lock.
  void append(const std::string& record);

 private:
  std::filesystem::path path_;
  std::map<std::pair<std::string, std::int64_t>, std::string> kept_;  // -> its line
  std::size_t replaced_ = 0;
  int fd_ = -1;
  std::mutex mutex_;
};

}  // namespace cuset
