#include "sample_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/log.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

int openForAppend(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw makeError("{}: cannot open for writing: {}", path.string(), std::strerror(errno));
  return fd;
}

}  // namespace

SampleFile::SampleFile(fs::path path, const Plan& plan, bool resume) : path_(std::move(path)) {
  if (!path_.parent_path().empty()) fs::create_directories(path_.parent_path());
  if (fs::exists(path_)) {
    const std::string text = readFile(path_);
    if (!resume && text.find_first_not_of(" \t\r\n") != std::string::npos) {
      throw makeError(
          "{}: already holds samples; pass --resume to continue it (finished samples are kept and not requested again), "
          "or choose another --out",
          path_.string());
    }
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::string movedAside;
    bool rewrite = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string& line = lines[i];
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      nlohmann::json record;
      try {
        record = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception&) {
        if (i + 1 == lines.size()) {
          // The run was killed mid-write: the sample is requested again.
          log::warn("{}:{}: torn last record (an interrupted run) dropped; its sample is requested again", path_.string(), i + 1);
          rewrite = true;
          continue;
        }
        throw makeError("{}:{}: malformed record; the file was not changed (fix or remove the line, or choose another --out)", path_.string(), i + 1);
      }
      if (!record.is_object() || !record.contains("problem") || !record["problem"].is_string() || !record.contains("sample") ||
          !record["sample"].is_number_integer() || !record.contains("request_key") || !record["request_key"].is_string()) {
        throw makeError(
            "{}:{}: not a sample written by `cuset generate --endpoint` (needs problem, sample and request_key); "
            "the file was not changed: choose another --out",
            path_.string(), i + 1);
      }
      const std::pair<std::string, std::int64_t> id{record["problem"].get<std::string>(), record["sample"].get<std::int64_t>()};
      const auto planned = plan.find(id);
      if (planned != plan.end() && planned->second == record["request_key"].get<std::string>() && !kept_.contains(id)) {
        kept_.emplace(id, line);
      } else {
        movedAside += line + "\n";
        ++replaced_;
        rewrite = true;
      }
    }
    if (rewrite) {
      // Moved aside before the rewrite: a crash in between leaves a copy in both files, never none.
      if (!movedAside.empty()) {
        const fs::path aside = path_.string() + ".replaced.jsonl";
        const int fd = openForAppend(aside);
        try {
          writeAll(fd, movedAside, aside);
        } catch (...) {
          ::close(fd);
          throw;
        }
        ::close(fd);
        log::info("{}: {} record(s) of other requests (a changed prompt, parameter or suite) moved to {}", path_.string(), replaced_, aside.string());
      }
      std::string keptText;
      for (const auto& [id, line] : kept_) keptText += line + "\n";
      writeFileAtomic(path_, keptText);
    }
  }
  fd_ = openForAppend(path_);
}

SampleFile::~SampleFile() {
  if (fd_ >= 0) ::close(fd_);
}

void SampleFile::append(const std::string& record) {
  const std::scoped_lock lock(mutex_);
  writeAll(fd_, record + "\n", path_);
}

}  // namespace cuset
