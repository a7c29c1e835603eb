#pragma once
// Messages between supervisor and worker: [u64 header length][JSON header][u64 payload length][payload].
// When the channel has a SharedPayload, the payload bytes are in it instead of in the frame, and the
// length carries kSharedPayloadFlag.
#include <chrono>
#include <functional>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cuset/evaluator/candidate/launch_plan.hpp"
#include "cuset/evaluator/region/device_region.hpp"
#include "cuset/evaluator/region/trial_run.hpp"

namespace cuset::sandbox {

class SharedPayload;

inline constexpr std::uint64_t kSharedPayloadFlag = std::uint64_t{1} << 63;

struct Message {
  nlohmann::json header;
  std::vector<std::byte> payload;  // bytes owned by the message
  // Or: bytes that already lie in the channel's shared payload (a received message, or a reply the
  // worker wrote in place). Valid until the next message on the channel.
  std::span<std::byte> shared;

  std::span<std::byte> bytes() { return shared.empty() ? std::span<std::byte>(payload) : shared; }
  // The payload into `out`: moved when the message owns it, else copied from the shared bytes into
  // `out`'s own storage (resized), which avoids a fresh allocation for a large region.
  void moveBytesTo(std::vector<std::byte>& out);
};

// With `shared`, the payload goes through it (copied in unless it already lies there); without, through
// the pipe. Throws cuset::Error when the pipe breaks.
void writeMessage(int fd, const Message& message, SharedPayload* shared = nullptr);
// nullopt on EOF or when `deadline` passes first; throws on a malformed frame, or on a frame that
// says its payload is shared when this side has no shared payload.
std::optional<Message> readMessage(int fd, std::optional<std::chrono::steady_clock::time_point> deadline, SharedPayload* shared = nullptr);

// The loop of a helper process: each request on stdin answered on stdout by `handle`, until the
// supervisor closes the pipe (returns 0) or the pipe breaks or carries a malformed frame (returns 2).
// `handle` turns its own failures into replies: an exception it lets through ends the helper.
int serveMessages(const std::function<Message(Message& request)>& handle, SharedPayload* shared = nullptr);

}  // namespace cuset::sandbox

namespace cuset {

// Launches for a worker: buffers as offsets into the device region, scalars with their type.
nlohmann::json launchesToJson(const std::vector<KernelStep>& launches, const RegionLayout& layout);
// A library step with every view's buffer placed in the region (TensorView::regionByte), and its JSON
// for a worker in another process.
LibraryStep placedIn(LibraryStep step, const RegionLayout& layout);
nlohmann::json libraryCallToJson(const LibraryStep& step, const RegionLayout& layout);
// Every step of a plan for a worker that runs them all (the GPU worker): kernels as launchesToJson
// gives them, library steps as {"library": call}; an autotuned launch carries {"autotune": {"key",
// "alternatives": its configurations' launches}}.
nlohmann::json stepsToJson(const LaunchPlan& plan, const RegionLayout& layout);
// A worker's "status" field ("ok", "runtime_error", ...) and back.
TrialRun::Status parseTrialStatus(const std::string& status);
std::string_view trialStatusName(TrialRun::Status status);

}  // namespace cuset
