#include "data_parallel.hpp"

#include <fmt/format.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>

#include "cuset/common/error.hpp"
#include "cuset/common/log.hpp"

#ifdef CUSET_HAVE_C10D_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif

namespace cuset {

#ifdef CUSET_HAVE_C10D_GLOO

namespace {

// The gradients of a run of parameters, flattened into one buffer that lives for the whole run.
struct GradientBucket {
  std::vector<at::Tensor> parameters;
  at::Tensor flat;
};

}  // namespace

struct DataParallel::Group {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
  std::vector<GradientBucket> buckets;
};

namespace {

// A collective that failed is almost always a peer that died or stopped answering: say so, say where,
// and say what to do, instead of Gloo's bare socket error.
[[noreturn]] void collectiveFailed(const DistributedEnv& env, std::string_view what, const std::exception& e) {
  std::string reason = e.what();
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) reason = c10->what_without_backtrace();
  throw makeError(
      "data-parallel training ({}): {} failed: {}. Another rank has stopped or did not answer within {} s; the job "
      "ends here (fix the cause, then start it again with --resume)",
      env.describe(), what, reason, std::chrono::duration_cast<std::chrono::seconds>(env.timeout).count());
}

void waitFor(const DistributedEnv& env, const c10::intrusive_ptr<c10d::Work>& work, std::string_view what) {
  try {
    work->wait();
  } catch (const std::exception& e) {
    collectiveFailed(env, what, e);
  }
}

// A blocking all-reduce of one tensor, in place (the tensor handed to Gloo shares `t`'s storage).
void allReduce(const DistributedEnv& env, c10d::ProcessGroupGloo& gloo, const at::Tensor& t, c10d::ReduceOp op, std::string_view what) {
  std::vector<at::Tensor> one = {t};
  c10d::AllreduceOptions options;
  options.reduceOp = op;
  waitFor(env, gloo.allreduce(one, options), what);
}

std::shared_ptr<::gloo::transport::Device> glooDevice(const DistributedEnv& env) {
  // GLOO_SOCKET_IFNAME is PyTorch's way to pick the network interface on multi-homed nodes.
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  }
  // Every rank on this node: loopback, which works even where the hostname does not resolve.
  if (env.localWorldSize == env.worldSize) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

}  // namespace

DataParallel::DataParallel(const DistributedEnv& env) : env_(env) {
  if (!env_.active()) return;
  group_ = std::make_unique<Group>();
  const auto started = std::chrono::steady_clock::now();
  try {
    c10d::TCPStoreOptions storeOptions;
    storeOptions.port = static_cast<std::uint16_t>(env_.masterPort);
    storeOptions.isServer = env_.rank == 0;
    storeOptions.numWorkers = static_cast<std::size_t>(env_.worldSize);
    storeOptions.waitWorkers = true;
    storeOptions.timeout = env_.timeout;
    group_->store = c10::make_intrusive<c10d::TCPStore>(env_.masterAddr, storeOptions);
    auto options = c10d::ProcessGroupGloo::Options::create(env_.timeout);
    options->devices.push_back(glooDevice(env_));
    group_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(group_->store, env_.rank, env_.worldSize, options);
  } catch (const std::exception& e) {
    std::string reason = e.what();
    if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) reason = c10->what_without_backtrace();
    throw makeError(
        "data-parallel training ({}): cannot meet the other ranks at MASTER_ADDR={} MASTER_PORT={} within {} s: {} (is every "
        "rank started, is the port free on rank 0's host, and can this host reach it?)",
        env_.describe(), env_.masterAddr, env_.masterPort, std::chrono::duration_cast<std::chrono::seconds>(env_.timeout).count(), reason);
  }
  log::info("data-parallel: {} connected through {}:{} in {:.2f} s (Gloo)", env_.describe(), env_.masterAddr, env_.masterPort,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

DataParallel::~DataParallel() = default;

void DataParallel::broadcast(const std::vector<at::Tensor>& tensors, std::string_view what, int root) {
  if (!active()) return;
  torch::NoGradGuard noGrad;
  for (const auto& t : tensors) {
    std::vector<at::Tensor> one = {t.is_contiguous() ? t : t.contiguous()};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    waitFor(env_, group_->gloo->broadcast(one, options), what);
    if (!t.is_contiguous()) t.copy_(one[0]);
  }
}

void DataParallel::sumGradients(const std::vector<at::Tensor>& parameters, std::string_view what) {
  if (!active()) return;
  // A one-element all-reduce first: the time until it returns is time spent waiting for the slowest
  // rank (uneven batches, a busy core), which would otherwise be counted as communication.
  const auto arrived = std::chrono::steady_clock::now();
  allReduce(env_, *group_->gloo, torch::zeros({1}, torch::kFloat32), c10d::ReduceOp::SUM, what);
  const auto started = std::chrono::steady_clock::now();
  waitSeconds_ += std::chrono::duration<double>(started - arrived).count();
  torch::NoGradGuard noGrad;
  auto& buckets = group_->buckets;
  if (buckets.empty()) {
    // Last parameters first, the order in which backward finishes their gradients (as DDP does), so
    // overlapping the all-reduce with backward later needs no new layout.
    std::int64_t bytes = 0;
    for (auto it = parameters.rbegin(); it != parameters.rend(); ++it) {
      const std::int64_t size = it->numel() * static_cast<std::int64_t>(it->element_size());
      const bool fits = !buckets.empty() && bytes + size <= bucketBytes && buckets.back().parameters.front().scalar_type() == it->scalar_type();
      if (!fits) {
        buckets.emplace_back();
        bytes = 0;
      }
      buckets.back().parameters.push_back(*it);
      bytes += size;
    }
    for (auto& b : buckets) {
      std::int64_t n = 0;
      for (const auto& p : b.parameters) n += p.numel();
      b.flat = torch::empty({n}, b.parameters.front().options().requires_grad(false));
    }
  }
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  for (auto& b : buckets) {
    std::int64_t offset = 0;
    for (const auto& p : b.parameters) {
      auto slice = b.flat.narrow(0, offset, p.numel());
      if (p.grad().defined())
        slice.copy_(p.grad().reshape({-1}));
      else
        slice.zero_();
      offset += p.numel();
    }
    std::vector<at::Tensor> one = {b.flat};
    works.push_back(group_->gloo->allreduce(one, c10d::AllreduceOptions()));
  }
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    waitFor(env_, works[i], what);
    std::int64_t offset = 0;
    for (auto p : buckets[i].parameters) {
      auto slice = buckets[i].flat.narrow(0, offset, p.numel()).view(p.sizes());
      if (p.grad().defined())
        p.mutable_grad().copy_(slice);
      else
        p.mutable_grad() = slice.clone();
      offset += p.numel();
    }
  }
  gradientSeconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

std::vector<double> DataParallel::sum(std::vector<double> values, std::string_view what) {
  if (!active() || values.empty()) return values;
  const at::Tensor t = torch::tensor(values, torch::kFloat64);
  allReduce(env_, *group_->gloo, t, c10d::ReduceOp::SUM, what);
  return {t.data_ptr<double>(), t.data_ptr<double>() + t.numel()};
}

std::pair<double, double> DataParallel::minMax(const std::function<double()>& compute, std::string_view what) {
  if (!active()) return {0.0, 0.0};
  const double value = compute();
  const at::Tensor t = torch::tensor({value, -value}, torch::kFloat64);  // max of -v is -min of v
  allReduce(env_, *group_->gloo, t, c10d::ReduceOp::MAX, what);
  return {-t[1].item<double>(), t[0].item<double>()};
}

at::Tensor DataParallel::gatherRows(const at::Tensor& local, std::string_view what) {
  if (!active()) return local;
  TORCH_CHECK(local.dim() == 2, "gatherRows expects (b, T)");
  const at::Tensor width = torch::tensor({local.size(1)}, torch::kInt64);
  allReduce(env_, *group_->gloo, width, c10d::ReduceOp::MAX, what);
  const std::int64_t T = width.item<std::int64_t>();
  at::Tensor padded = torch::zeros({local.size(0), T}, local.options());
  padded.narrow(1, 0, local.size(1)).copy_(local);
  std::vector<at::Tensor> input = {padded};
  std::vector<std::vector<at::Tensor>> output(1);
  for (int r = 0; r < env_.worldSize; ++r) output[0].push_back(torch::empty_like(padded));
  waitFor(env_, group_->gloo->allgather(output, input, c10d::AllgatherOptions()), what);
  return torch::cat(output[0], 0);
}

#else  // a LibTorch without c10d's Gloo backend (or without gloo's headers)

struct DataParallel::Group {};

DataParallel::DataParallel(const DistributedEnv& env) : env_(env) {
  if (env_.active()) {
    throw makeError(
        "WORLD_SIZE={}: this build of cuset has no c10d Gloo backend, so it cannot train data-parallel (install gloo's headers, "
        "e.g. Debian's libgloo-dev, and rebuild; docs/scale-out.md)",
        env_.worldSize);
  }
}
DataParallel::~DataParallel() = default;
void DataParallel::broadcast(const std::vector<at::Tensor>&, std::string_view, int) {}
void DataParallel::sumGradients(const std::vector<at::Tensor>&, std::string_view) {}
std::vector<double> DataParallel::sum(std::vector<double> values, std::string_view) { return values; }
std::pair<double, double> DataParallel::minMax(const std::function<double()>&, std::string_view) { return {0.0, 0.0}; }
at::Tensor DataParallel::gatherRows(const at::Tensor& local, std::string_view) { return local; }

#endif

double DataParallel::takeGradientSeconds() { return std::exchange(gradientSeconds_, 0.0); }
double DataParallel::takeWaitSeconds() { return std::exchange(waitSeconds_, 0.0); }

}  // namespace cuset
