#include "nvrtc_isolation.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cuset/evaluator/compile/nvrtc_worker.hpp"
#include "cuset/evaluator/sandbox/sandbox_protocol.hpp"
#include "cuset/evaluator/sandbox/worker_process.hpp"
#include "cuset/evaluator/sandbox/process_roles.hpp"

namespace cuset {
namespace detail {

NvrtcHelperPool::NvrtcHelperPool(std::chrono::milliseconds timeout) : timeout_(timeout) {}
NvrtcHelperPool::~NvrtcHelperPool() = default;

Expected<RawCompile> NvrtcHelperPool::compile(std::string_view source, const std::vector<std::string>& options, const std::vector<std::string>& names,
                                              bool cubin) {
  std::unique_ptr<WorkerProcess> helper;
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      helper = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  // Through the pipe: sources and cubins are kilobytes.
  if (!helper)
    helper = std::make_unique<WorkerProcess>(std::vector<std::string>{std::string(kNvrtcWorkerRole.name)}, false, WorkerEnvironment::minimal);
  sandbox::Message request;
  request.header = {{"op", "compile"}, {"options", options}, {"names", names}, {"cubin", cubin}};
  request.payload.assign(reinterpret_cast<const std::byte*>(source.data()), reinterpret_cast<const std::byte*>(source.data()) + source.size());
  auto reply = helper->call(request, std::chrono::steady_clock::now() + timeout_);
  if (!reply) {
    // call() has stopped the helper; the next compile starts a fresh one.
    const bool silent = reply.error() == "worker stopped answering";  // no exit to describe: still running at the deadline
    return Unexpected(silent ? fmt::format("NVRTC did not finish within the compile time limit of {} s", timeout_.count() / 1000.0)
                             : "the NVRTC helper process failed: " + reply.error());
  }
  if (reply->header.value("status", "") != "ok") {
    return Unexpected("the NVRTC helper process failed: " + reply->header.value("message", std::string("no reason given")));
  }
  RawCompile out;
  out.ok = reply->header.at("compiled").get<bool>();
  out.log = reply->header.at("log").get<std::string>();
  out.lowered = reply->header.at("lowered").get<std::map<std::string, std::string>>();
  reply->moveBytesTo(out.image);
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(helper));
  return out;
}

}  // namespace detail

int runNvrtcWorker() {
  // A compile may not write files, and its memory is bounded: a compile that exhausts it ends this
  // helper, not the evaluation.
  rlimit none{0, 0};
  ::setrlimit(RLIMIT_FSIZE, &none);
  ::setrlimit(RLIMIT_CORE, &none);
#if !defined(__SANITIZE_ADDRESS__)
  rlimit memory{std::size_t{8} << 30, std::size_t{8} << 30};
  ::setrlimit(RLIMIT_AS, &memory);
#endif
  return sandbox::serveMessages([](sandbox::Message& request) {
    sandbox::Message reply;
    try {
      const auto& h = request.header;
      const std::string_view source(reinterpret_cast<const char*>(request.payload.data()), request.payload.size());
      detail::RawCompile raw = detail::runNvrtc(source, h.at("options").get<std::vector<std::string>>(),
                                                h.at("names").get<std::vector<std::string>>(), h.at("cubin").get<bool>());
      reply.header = {{"status", "ok"}, {"compiled", raw.ok}, {"log", raw.log}, {"lowered", raw.lowered}};
      reply.payload = std::move(raw.image);
    } catch (const std::exception& e) {
      reply.header = {{"status", "error"}, {"message", e.what()}};
    }
    return reply;
  });
}

}  // namespace cuset
