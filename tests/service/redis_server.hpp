#pragma once
// A redis-server of a test's own on a free loopback port (the fleet's tests), or none when this machine
// has no redis-server (the test skips, saying so).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace cuset::test {

class RedisServer {
 public:
  explicit RedisServer(const std::filesystem::path& dir) : port_(freePort()) {
    std::vector<std::string> args = {
        "redis-server", "--port",    std::to_string(port_),       "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--dir",
        dir.string(),   "--logfile", (dir / "redis.log").string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (::posix_spawnp(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
      pid_ = -1;
      return;
    }
    for (int i = 0; i < 100 && !accepting(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ~RedisServer() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  bool running() const { return pid_ > 0 && accepting(); }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  static int freePort() {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    socklen_t n = sizeof(a);
    ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &n);
    ::close(s);
    return ntohs(a.sin_port);
  }

 private:
  bool accepting() const {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    ::close(s);
    return ok;
  }
  int port_;
  pid_t pid_ = -1;
};

}  // namespace cuset::test
