#include "cuset/evaluator/sandbox/sandbox_protocol.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/evaluator/sandbox/shared_payload.hpp"

namespace cuset::sandbox {
namespace {

constexpr std::uint64_t kMaxHeaderBytes = 16u << 20;
constexpr std::uint64_t kMaxPayloadBytes = std::uint64_t{64} << 30;

// false on EOF or timeout.
bool readExact(int fd, void* buffer, std::size_t size, std::optional<std::chrono::steady_clock::time_point> deadline) {
  auto* out = static_cast<char*>(buffer);
  while (size > 0) {
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (ready < 0 && errno != EINTR) return false;
      if (ready <= 0) continue;
    }
    const ssize_t n = ::read(fd, out, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

void Message::moveBytesTo(std::vector<std::byte>& out) {
  if (shared.empty()) {
    out = std::move(payload);
  } else {
    out.resize(shared.size());
    std::memcpy(out.data(), shared.data(), shared.size());
  }
}

void writeMessage(int fd, const Message& message, SharedPayload* shared) {
  const std::span<const std::byte> bytes = message.shared.empty() ? std::span<const std::byte>(message.payload) : message.shared;
  const bool viaShared = shared != nullptr && !bytes.empty();
  if (viaShared && !shared->holds(bytes)) {
    const std::span<std::byte> room = shared->reserve(bytes.size());
    std::memcpy(room.data(), bytes.data(), bytes.size());
  }
  if (!viaShared && !message.shared.empty()) throw makeError("sandbox protocol: a shared payload on a channel without one");
  const std::string header = message.header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::uint64_t headerSize = header.size(), payloadSize = bytes.size() | (viaShared ? kSharedPayloadFlag : 0);
  std::string frame(reinterpret_cast<const char*>(&headerSize), sizeof(headerSize));
  frame += header;
  frame.append(reinterpret_cast<const char*>(&payloadSize), sizeof(payloadSize));
  writeAll(fd, frame, "sandbox pipe");
  if (!viaShared) writeAll(fd, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), "sandbox pipe");
}

std::optional<Message> readMessage(int fd, std::optional<std::chrono::steady_clock::time_point> deadline, SharedPayload* shared) {
  std::uint64_t headerSize = 0;
  if (!readExact(fd, &headerSize, sizeof(headerSize), deadline)) return std::nullopt;
  if (headerSize > kMaxHeaderBytes) throw makeError("sandbox protocol: header of {} bytes", headerSize);
  std::string header(headerSize, '\0');
  if (!readExact(fd, header.data(), header.size(), deadline)) return std::nullopt;
  std::uint64_t payloadSize = 0;
  if (!readExact(fd, &payloadSize, sizeof(payloadSize), deadline)) return std::nullopt;
  const bool viaShared = (payloadSize & kSharedPayloadFlag) != 0;
  payloadSize &= ~kSharedPayloadFlag;
  if (payloadSize > kMaxPayloadBytes) throw makeError("sandbox protocol: payload of {} bytes", payloadSize);
  Message m;
  try {
    m.header = nlohmann::json::parse(header);
  } catch (const nlohmann::json::exception& e) {
    throw makeError("sandbox protocol: a header that is not JSON ({})", e.what());
  }
  if (!m.header.is_object()) throw makeError("sandbox protocol: a header that is not a JSON object");
  if (viaShared) {
    if (!shared) throw makeError("sandbox protocol: a frame with a shared payload on a channel without one");
    m.shared = shared->view(payloadSize);
    return m;
  }
  m.payload.resize(payloadSize);
  if (!readExact(fd, m.payload.data(), m.payload.size(), deadline)) return std::nullopt;
  return m;
}

int serveMessages(const std::function<Message(Message& request)>& handle, SharedPayload* shared) {
  for (;;) {
    std::optional<Message> request;
    try {
      request = readMessage(STDIN_FILENO, std::nullopt, shared);
    } catch (const std::exception&) {
      return 2;
    }
    if (!request) return 0;
    const Message reply = handle(*request);
    try {
      writeMessage(STDOUT_FILENO, reply, shared);
    } catch (const std::exception&) {
      return 2;
    }
  }
}

}  // namespace cuset::sandbox

namespace cuset {

nlohmann::json launchesToJson(const std::vector<KernelStep>& launches, const RegionLayout& layout) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& l : launches) {
    nlohmann::json args = nlohmann::json::array();
    for (const auto& a : l.args) {
      if (a.kind == PlanArg::Kind::buffer) {
        const BufferSlot* slot = layout.find(a.buffer);
        if (!slot) throw makeError("launch of {}: no buffer '{}' in the device region", l.kernel, a.buffer);
        if (a.byteOffset < 0 || static_cast<std::size_t>(a.byteOffset) > slot->bytes) {
          throw makeError("launch of {}: a pointer {} bytes into buffer '{}' of {} bytes", l.kernel, a.byteOffset, a.buffer, slot->bytes);
        }
        args.push_back({{"buffer", slot->offset + static_cast<std::size_t>(a.byteOffset)}, {"name", a.describe()}});
      } else if (a.kind == PlanArg::Kind::null) {
        args.push_back({{"null", true}});
      } else {
        std::string hex;
        for (auto b : a.bytes) hex += fmt::format("{:02x}", b);
        args.push_back({{"scalar", hex}, {"type", a.type}});
      }
    }
    out.push_back({{"kernel", l.kernel}, {"grid", l.grid}, {"block", l.block}, {"shared", l.sharedBytes}, {"args", args}});
  }
  return out;
}

LibraryStep placedIn(LibraryStep step, const RegionLayout& layout) {
  step.forEachView([&](TensorView& v) {
    const BufferSlot* slot = layout.find(v.buffer);
    if (!slot) throw makeError("library step: no buffer '{}' in the device region", v.buffer);
    v.regionByte = static_cast<std::int64_t>(slot->offset);
  });
  return step;
}

nlohmann::json libraryCallToJson(const LibraryStep& step, const RegionLayout& layout) { return toJson(placedIn(step, layout)); }

nlohmann::json stepsToJson(const LaunchPlan& plan, const RegionLayout& layout) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : plan.steps) {
    if (s.kind == PlanStep::Kind::library) {
      out.push_back({{"library", libraryCallToJson(s.library, layout)}});
      continue;
    }
    out.push_back(launchesToJson({s.kernel}, layout)[0]);
    if (s.kernel.autotune) {
      out.back()["autotune"] = {{"key", s.kernel.autotune->key}, {"alternatives", launchesToJson(s.kernel.autotune->alternatives, layout)}};
    }
  }
  return out;
}

TrialRun::Status parseTrialStatus(const std::string& s) {
  if (s == "ok") return TrialRun::Status::ok;
  if (s == "runtime_error") return TrialRun::Status::runtimeError;
  if (s == "invalid_submission") return TrialRun::Status::invalidSubmission;
  if (s == "timeout") return TrialRun::Status::timeout;
  if (s == "too_slow") return TrialRun::Status::tooSlow;
  if (s == "sandbox_violation") return TrialRun::Status::sandboxViolation;
  return TrialRun::Status::harnessError;
}

std::string_view trialStatusName(TrialRun::Status status) {
  switch (status) {
    case TrialRun::Status::ok:
      return "ok";
    case TrialRun::Status::runtimeError:
      return "runtime_error";
    case TrialRun::Status::invalidSubmission:
      return "invalid_submission";
    case TrialRun::Status::timeout:
      return "timeout";
    case TrialRun::Status::tooSlow:
      return "too_slow";
    case TrialRun::Status::sandboxViolation:
      return "sandbox_violation";
    case TrialRun::Status::harnessError:
      return "harness_error";
  }
  return "harness_error";
}

}  // namespace cuset
