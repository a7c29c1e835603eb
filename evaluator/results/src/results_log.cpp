#include "cuset/evaluator/results/results_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"

namespace fs = std::filesystem;

namespace cuset {

ResultsLog::ResultsLog(fs::path path, bool resume) : path_(std::move(path)) {
  std::error_code ec;
  const bool exists = fs::exists(path_, ec);
  if (exists && fs::file_size(path_) > 0) {
    if (!resume) {
      throw makeError("{} already holds results; pass --resume to continue that run, or choose another --out", path_.string());
    }
    const std::string content = readFile(path_);
    std::size_t keep = content.rfind('\n');
    keep = keep == std::string::npos ? 0 : keep + 1;
    if (keep < content.size()) {
      log::warn("{}: dropping a torn last record ({} bytes) left by an interrupted run", path_.string(), content.size() - keep);
      fs::resize_file(path_, keep);
    }
    std::size_t lineStart = 0;
    std::size_t lineNo = 0;
    while (lineStart < keep) {
      const std::size_t end = content.find('\n', lineStart);
      ++lineNo;
      const std::string_view line(content.data() + lineStart, end - lineStart);
      lineStart = end + 1;
      if (line.empty()) continue;
      try {
        EvalResult r = evalResultFromJson(parseJson(line, "record"));
        done_.insert(r.key());
        previous_.push_back(std::move(r));
      } catch (const Error& e) {
        throw makeError("{}:{}: cannot resume from a corrupt record ({}); move the file aside to start over", path_.string(), lineNo, e.what());
      }
    }
  }
  fs::create_directories(path_.parent_path().empty() ? fs::path(".") : path_.parent_path());
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw makeError("{}: cannot open for appending: {}", path_.string(), std::strerror(errno));
}

ResultsLog::~ResultsLog() {
  if (fd_ >= 0) {
    ::fsync(fd_);
    ::close(fd_);
  }
}

bool ResultsLog::contains(const std::string& key) const {
  std::lock_guard lock(mutex_);
  return done_.contains(key);
}

void ResultsLog::append(const EvalResult& result) {
  const std::string line = dumpJson(toJson(result)) + "\n";
  std::lock_guard lock(mutex_);
  // O_APPEND with one write per record: a record is either wholly in the file or (if the process dies
  // inside the call) a torn tail that the next --resume cuts off.
  writeAll(fd_, line, path_);
  done_.insert(result.key());
}

}  // namespace cuset
