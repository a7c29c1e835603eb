#pragma once
// A long-lived child spoken to by lines: one request on its stdin, one reply on its stdout (a warm
// `cuset engine`). Its stderr goes to a file, for the reason it gives when it fails. The child runs in a
// process group of its own, and the group (the child and whatever it started) is killed when it runs
// past a reply's time limit, when the caller cancels, and when this object goes.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cuset {

// The lines a child writes on a pipe, read with a deadline: what every line protocol with a child
// (a warm engine, the warm recorder) waits on. Bytes after a line stay for the next one.
class PipeLines {
 public:
  enum class End { line, timedOut, cancelled, closed };
  // The next line (without its '\n') in `line`; `closed` when the pipe ended or failed first.
  End next(int fd, std::string& line, std::chrono::steady_clock::time_point deadline, const std::atomic<bool>* cancel = nullptr);

 private:
  std::string pending_;
};

class LineProcess {
 public:
  // Throws cuset::Error when the program cannot be started.
  LineProcess(const std::vector<std::string>& argv, const std::filesystem::path& stderrFile);
  ~LineProcess();
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;

  struct Reply {
    std::optional<std::string> line;  // absent: the child is gone (ended, killed at the limit, cancelled)
    bool timedOut = false;
    bool cancelled = false;
  };
  // Sends `request` (nothing when empty) and waits for one line of reply.
  Reply exchange(const std::string& request, std::chrono::milliseconds timeout, const std::atomic<bool>* cancel = nullptr);
  bool alive() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // How the child ended ("exited with status 1", "killed by signal 9"); empty while it runs.
  const std::string& ending() const { return ending_; }
  // The end of what it wrote on stderr, for a message.
  std::string stderrTail(std::size_t bytes = 2000) const;
  void stop();

 private:
  pid_t pid_ = -1;
  int requests_ = -1, replies_ = -1;
  std::filesystem::path stderrFile_;
  PipeLines replyLines_;
  std::string ending_;
};

}  // namespace cuset
