#include "cuset/evaluator/cuda/nvml_clock_monitor.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>

namespace cuset {

// The few NVML entry points used, declared here: the toolkit on build machines has no nvml.h.
struct NvmlClockMonitor::Api {
  using Init = int (*)();
  using HandleByPci = int (*)(const char*, void**);
  using Reasons = int (*)(void*, unsigned long long*);
  using Clock = int (*)(void*, int, unsigned*);
  Init init = nullptr;
  HandleByPci handleByPci = nullptr;
  Reasons reasons = nullptr;
  Clock clock = nullptr;
};

namespace {
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;
}  // namespace

std::string describeThrottleReasons(std::uint64_t reasons) {
  static const std::pair<std::uint64_t, const char*> kNames[] = {{0x4, "power cap"},
                                                                 {0x8, "hardware slowdown"},
                                                                 {0x20, "thermal slowdown (software)"},
                                                                 {0x40, "thermal slowdown (hardware)"},
                                                                 {0x80, "power brake"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if (reasons & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  }
  return out;
}

NvmlClockMonitor::NvmlClockMonitor(std::unique_ptr<Api> api, void* device) : api_(std::move(api)), device_(device) {}
NvmlClockMonitor::~NvmlClockMonitor() = default;

std::unique_ptr<NvmlClockMonitor> NvmlClockMonitor::open(const std::string& pciBusId) {
  void* handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) return nullptr;
  auto api = std::make_unique<Api>();
  api->init = reinterpret_cast<Api::Init>(dlsym(handle, "nvmlInit_v2"));
  api->handleByPci = reinterpret_cast<Api::HandleByPci>(dlsym(handle, "nvmlDeviceGetHandleByPciBusId_v2"));
  api->reasons = reinterpret_cast<Api::Reasons>(dlsym(handle, "nvmlDeviceGetCurrentClocksEventReasons"));
  if (!api->reasons) api->reasons = reinterpret_cast<Api::Reasons>(dlsym(handle, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  api->clock = reinterpret_cast<Api::Clock>(dlsym(handle, "nvmlDeviceGetClockInfo"));
  if (!api->init || !api->handleByPci || !api->reasons || !api->clock || api->init() != kNvmlSuccess) return nullptr;
  void* device = nullptr;
  if (api->handleByPci(pciBusId.c_str(), &device) != kNvmlSuccess) return nullptr;
  return std::make_unique<NvmlClockMonitor>(std::move(api), device);
}

std::optional<std::uint64_t> NvmlClockMonitor::throttleReasons() const {
  unsigned long long reasons = 0;
  if (api_->reasons(device_, &reasons) != kNvmlSuccess) return std::nullopt;
  return reasons;
}

std::optional<unsigned> NvmlClockMonitor::smClockMhz() const {
  unsigned mhz = 0;
  if (api_->clock(device_, kNvmlClockSm, &mhz) != kNvmlSuccess) return std::nullopt;
  return mhz;
}

}  // namespace cuset
