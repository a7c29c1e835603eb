#include "cuset/evaluator/candidate/launch_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace cuset {
namespace {

template <class T>
PlanArg scalarOf(T v, std::string type) {
  PlanArg a;
  a.kind = PlanArg::Kind::scalar;
  a.bytes.resize(sizeof(T));
  std::memcpy(a.bytes.data(), &v, sizeof(T));
  a.type = std::move(type);
  return a;
}

template <class T>
T scalarValue(const PlanArg& a) {
  T v{};
  std::memcpy(&v, a.bytes.data(), std::min(sizeof(T), a.bytes.size()));
  return v;
}

void pushDistinct(std::vector<std::string>& out, const std::string& s) {
  if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
}

}  // namespace

PlanArg PlanArg::pointer(std::string buffer, std::int64_t byteOffset) {
  PlanArg a;
  a.kind = Kind::buffer;
  a.buffer = std::move(buffer);
  a.byteOffset = byteOffset;
  return a;
}
PlanArg PlanArg::int32(std::int32_t v) { return scalarOf(v, "int32"); }
PlanArg PlanArg::int64(std::int64_t v) { return scalarOf(v, "int64"); }
PlanArg PlanArg::float32(float v) { return scalarOf(v, "float32"); }
PlanArg PlanArg::float64(double v) { return scalarOf(v, "float64"); }

std::string PlanArg::describe() const {
  switch (kind) {
    case Kind::buffer:
      return byteOffset ? fmt::format("{}+{}B", buffer, byteOffset) : buffer;
    case Kind::null:
      return "nullptr";
    case Kind::scalar:
      break;
  }
  if (type == "int32") return fmt::format("int32 {}", scalarValue<std::int32_t>(*this));
  if (type == "int64") return fmt::format("int64 {}", scalarValue<std::int64_t>(*this));
  if (type == "uint32") return fmt::format("uint32 {}", scalarValue<std::uint32_t>(*this));
  if (type == "uint64") return fmt::format("uint64 {}", scalarValue<std::uint64_t>(*this));
  if (type == "float32") return fmt::format("float32 {}", scalarValue<float>(*this));
  if (type == "float64") return fmt::format("float64 {}", scalarValue<double>(*this));
  std::string hex;
  for (auto b : bytes) hex += fmt::format("{:02x}", b);
  return fmt::format("{} 0x{}", type, hex);
}

std::vector<std::string> LaunchPlan::kernelNames() const {
  std::vector<std::string> out;
  for (const auto& s : steps) {
    if (s.kind != PlanStep::Kind::kernel) continue;
    pushDistinct(out, s.kernel.kernel);
    if (s.kernel.autotune) {
      for (const auto& a : s.kernel.autotune->alternatives) pushDistinct(out, a.kernel);
    }
  }
  return out;
}

bool LaunchPlan::autotuned() const {
  return std::any_of(steps.begin(), steps.end(), [](const PlanStep& s) { return s.kind == PlanStep::Kind::kernel && s.kernel.autotune; });
}

LaunchPlan LaunchPlan::tuned(const std::map<std::string, std::size_t>& chosen) const {
  LaunchPlan out = *this;
  for (auto& s : out.steps) {
    if (s.kind != PlanStep::Kind::kernel || !s.kernel.autotune) continue;
    const auto tuning = s.kernel.autotune;
    const auto it = chosen.find(tuning->key);
    if (it != chosen.end() && it->second < tuning->alternatives.size()) s.kernel = tuning->alternatives[it->second];
    s.kernel.autotune = nullptr;
  }
  return out;
}

std::vector<std::string> LaunchPlan::libraryOps() const {
  std::vector<std::string> out;
  for (const auto& s : steps) {
    if (s.kind == PlanStep::Kind::library && !s.library.harness()) pushDistinct(out, s.library.op());
  }
  return out;
}

bool LaunchPlan::usesLibrary() const {
  return std::any_of(steps.begin(), steps.end(), [](const PlanStep& s) { return s.kind == PlanStep::Kind::library; });
}

std::vector<KernelStep> LaunchPlan::kernelSteps() const {
  std::vector<KernelStep> out;
  for (const auto& s : steps) {
    if (s.kind == PlanStep::Kind::kernel) out.push_back(s.kernel);
  }
  return out;
}

nlohmann::json LaunchPlan::toJson() const {
  nlohmann::json j = {{"scratch", nlohmann::json::array()}, {"steps", nlohmann::json::array()}, {"zeroed_outputs", zeroedOutputs}};
  for (const auto& b : scratch) {
    j["scratch"].push_back({{"name", b.name}, {"dtype", dtypeName(b.dtype)}, {"shape", b.shape}, {"init", b.zeroed ? "zeros" : "poisoned"}});
  }
  for (const auto& s : steps) {
    if (s.kind == PlanStep::Kind::library) {
      j["steps"].push_back({{"library", s.library.describe()}});
      continue;
    }
    std::vector<std::string> args;
    for (const auto& a : s.kernel.args) args.push_back(a.describe());
    j["steps"].push_back(
        {{"kernel", s.kernel.kernel}, {"grid", s.kernel.grid}, {"block", s.kernel.block}, {"shared_bytes", s.kernel.sharedBytes}, {"args", args}});
    if (s.kernel.autotune) {
      nlohmann::json kernels = nlohmann::json::array();
      for (const auto& a : s.kernel.autotune->alternatives) kernels.push_back(a.kernel);
      j["steps"].back()["autotune"] = {{"key", s.kernel.autotune->key}, {"configs", s.kernel.autotune->configs}, {"kernels", kernels}};
    }
  }
  return j;
}

std::vector<std::string> CandidatePlan::libraryOps() const {
  std::vector<std::string> out;
  for (const auto& [set, plan] : plans) {
    for (const auto& op : plan.libraryOps()) pushDistinct(out, op);
  }
  return out;
}

Expected<LaunchPlan> planFromManifest(const LaunchManifest& manifest, const SizeBindings& sizes) {
  auto launches = resolveLaunches(manifest, sizes);
  if (!launches) return Unexpected{launches.error()};
  LaunchPlan plan;
  for (const auto& w : manifest.workspace) plan.scratch.push_back({w.name, w.dtype, *evaluateShape(w, sizes), true});  // checked by resolveLaunches
  for (auto& l : *launches) {
    PlanStep step;
    step.kernel.kernel = std::move(l.kernel);
    step.kernel.grid = l.grid;
    step.kernel.block = l.block;
    step.kernel.sharedBytes = l.sharedBytes;
    for (const auto& a : l.args) {
      if (a.kind == LaunchArg::Kind::buffer)
        step.kernel.args.push_back(PlanArg::pointer(a.buffer));
      else if (a.type == LaunchArg::ScalarType::int64)
        step.kernel.args.push_back(PlanArg::int64(a.value));
      else
        step.kernel.args.push_back(PlanArg::int32(static_cast<std::int32_t>(a.value)));
    }
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

}  // namespace cuset
