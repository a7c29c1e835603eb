// `cuset engine`: one EvaluationEngine kept warm between runs, spoken to by lines (docs/serve.md "Warm
// engines"). What `cuset serve` and `cuset worker` run each task through instead of a `cuset eval`
// process per task.
#include <fcntl.h>
#include <signal.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "commands.hpp"
#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/evaluator/evaluation/evaluation.hpp"

namespace cuset::cli {
namespace {

// The process's resident memory, as the kernel counts it (VmRSS), in bytes; 0 when unreadable.
std::size_t residentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // "VmRSS:   123456 kB"
  }
  return 0;
}

// One request: {"args": [cuset eval's arguments]}. One reply, always one line.
nlohmann::json serveRequest(EvaluationEngine& engine, const std::string& line, std::size_t& runs) {
  const auto start = std::chrono::steady_clock::now();
  nlohmann::json reply;
  try {
    const nlohmann::json request = nlohmann::json::parse(line);
    const EvalConfig config = evalConfigFromArguments(request.at("args").get<std::vector<std::string>>());
    const EvalRunSummary summary = engine.run(config);
    ++runs;
    reply = {{"ok", true}, {"run_dir", summary.runDir.string()}, {"warm", summary.warmHarness}, {"candidates", summary.evaluatedNow}};
  } catch (const CLI::ParseError& e) {
    reply = {{"ok", false}, {"error", fmt::format("cuset eval's arguments: {}", e.what())}};
  } catch (const std::exception& e) {
    reply = {{"ok", false}, {"error", e.what()}};
  }
  reply["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  reply["runs"] = runs;
  reply["rss_bytes"] = residentBytes();
  return reply;
}

// An engine whose client is gone (a worker killed with SIGKILL) must not finish the task it was given:
// another worker runs it. It ends at once, with what it started when it leads a group of its own (as
// a client starts it).
void endWithClient() {
  const pid_t parent = ::getppid();
  std::thread([parent] {
    while (::getppid() == parent) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (::getpgrp() == ::getpid()) ::kill(0, SIGKILL);
    ::_exit(1);
  }).detach();
}

int serveEngine() {
  endWithClient();
  // The replies' channel is the original stdout, moved aside: anything a library or helper prints goes
  // to stderr instead of into the protocol.
  const int protocol = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (protocol < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::cerr << "cuset engine: cannot set its reply channel aside\n";
    return 1;
  }
  EvaluationEngine engine;
  std::size_t runs = 0;
  std::string line;
  try {
    writeAll(protocol, nlohmann::json{{"status", "ready"}}.dump() + "\n", "the reply pipe");
  } catch (const Error&) {
    return 1;
  }
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    try {
      writeAll(protocol, serveRequest(engine, line, runs).dump() + "\n", "the reply pipe");
    } catch (const Error&) {  // the client is gone
      return 1;
    }
  }
  return 0;
}

}  // namespace

void registerEngineCommand(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand("engine",
                                     "Judge runs one after another in one warm evaluation engine: each stdin line {\"args\": [cuset eval's "
                                     "arguments]} gets one stdout line {\"ok\", \"run_dir\" | \"error\", \"warm\", \"seconds\", \"rss_bytes\"}");
  cmd->callback([&context] { context.exitCode = serveEngine(); });
}

}  // namespace cuset::cli
