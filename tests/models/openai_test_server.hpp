#pragma once
// Starts tests/models/openai_test_server.py on 127.0.0.1 (an ephemeral port) for one test, and stops
// it at scope exit. The script is the server's JSON (see the .py file's docstring).
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"

extern char** environ;

namespace cuset::test {

class OpenAiTestServer {
 public:
  explicit OpenAiTestServer(const nlohmann::json& script, std::vector<std::string> extraArgs = {}) {
    writeText(dir_ / "script.json", script.dump());
    const std::string python = CUSET_PYTHON;
    std::vector<std::string> args = {python,        std::string(CUSET_SOURCE_DIR) + "/tests/models/openai_test_server.py",
                                     "--script",    (dir_ / "script.json").string(),
                                     "--port-file", (dir_ / "port").string(),
                                     "--log",       (dir_ / "requests.jsonl").string()};
    args.insert(args.end(), extraArgs.begin(), extraArgs.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawnp(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) throw Error("cannot start the test server");
    for (int i = 0; i < 200 && !std::filesystem::exists(dir_ / "port"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    if (!std::filesystem::exists(dir_ / "port")) throw Error("the test server did not start within 5 s");
    port_ = std::stoi(readText(dir_ / "port"));
  }
  ~OpenAiTestServer() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  OpenAiTestServer(const OpenAiTestServer&) = delete;
  OpenAiTestServer& operator=(const OpenAiTestServer&) = delete;

  std::string url(const std::string& scheme = "http") const { return scheme + "://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  // Every request the server saw, in arrival order.
  std::vector<nlohmann::json> requests() const {
    std::vector<nlohmann::json> out;
    std::istringstream in(readText(dir_ / "requests.jsonl"));
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  std::size_t chatRequests() const {
    std::size_t n = 0;
    for (const auto& r : requests()) n += r["path"].get<std::string>().ends_with("/chat/completions");
    return n;
  }
  const std::filesystem::path& dir() const { return dir_.path(); }

 private:
  TempDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace cuset::test
