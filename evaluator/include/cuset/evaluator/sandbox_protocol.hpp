#pragma once
// Messages between supervisor and worker: [u64 header length][JSON header][u64 payload length][payload].
#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cuset/evaluator/device_region.hpp"
#include "cuset/evaluator/launch_manifest.hpp"
#include "cuset/evaluator/trial_run.hpp"

namespace cuset::sandbox {

struct Message {
  nlohmann::json header;
  std::vector<std::byte> payload;
};

// Throws cuset::Error when the pipe breaks.
void writeMessage(int fd, const Message& message);
// nullopt on EOF or when `deadline` passes first; throws on a malformed frame.
std::optional<Message> readMessage(int fd, std::optional<std::chrono::steady_clock::time_point> deadline);

}  // namespace cuset::sandbox

namespace cuset {

// Launches for a worker: buffers as offsets into the device region, scalars with their type.
nlohmann::json launchesToJson(const std::vector<ResolvedLaunch>& launches, const RegionLayout& layout);
// A worker's "status" field ("ok", "runtime_error", ...) and back.
TrialRun::Status parseTrialStatus(const std::string& status);
std::string_view trialStatusName(TrialRun::Status status);

}  // namespace cuset
