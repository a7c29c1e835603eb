#pragma once
// Clock-throttle detection during timing, through NVML loaded lazily (libnvidia-ml.so.1), like the
// driver. A sample taken while the GPU slowed down for power or heat is not comparable with others,
// so the measurement records the reasons seen and the SM clock range.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace cuset {

// Throttle-reason bits that make timings unreliable (power cap, hardware slowdown, thermal, power
// brake), as NVML's clocks-event-reason mask defines them; idle and application-clock bits are not.
inline constexpr std::uint64_t kSignificantThrottleReasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;
// "power cap, thermal slowdown (software)"; empty when no significant bit is set.
std::string describeThrottleReasons(std::uint64_t reasons);

class NvmlClockMonitor {
 public:
  // nullptr (with no error: throttle detection is best effort) when NVML or the device is unavailable.
  // `pciBusId` is the CUDA device's ("0000:3b:00.0"), so CUDA_VISIBLE_DEVICES cannot mix devices up.
  static std::unique_ptr<NvmlClockMonitor> open(const std::string& pciBusId);

  std::optional<std::uint64_t> throttleReasons() const;
  std::optional<unsigned> smClockMhz() const;

  struct Api;
  NvmlClockMonitor(std::unique_ptr<Api> api, void* device);
  ~NvmlClockMonitor();

 private:
  std::unique_ptr<Api> api_;
  void* device_ = nullptr;
};

}  // namespace cuset
