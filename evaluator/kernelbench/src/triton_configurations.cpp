#include "triton_configurations.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <vector>

#include "cuset/evaluator/compile/compiler_log.hpp"
#include "cuset/evaluator/compile/nvrtc_compiler.hpp"

namespace cuset::detail {
namespace {

using json = nlohmann::json;

template <class F>
void forEachAutotunedLaunch(json& plans, F&& f) {
  for (auto& [set, plan] : plans.items()) {
    for (auto& step : plan.at("steps")) {
      if (step.contains("kernel") && step["kernel"].contains("autotune")) f(step["kernel"]);
    }
  }
}

}  // namespace

std::string assembledConfigurations(const json& triton, json& plans, const std::string& arch, std::string& log) {
  const std::string whole = triton.value("device_source", std::string());
  if (!triton.contains("kernels")) return whole;
  std::map<std::string, std::string> code;
  for (const auto& k : triton.at("kernels")) code[k.at("name").get<std::string>()] = k.at("code").get<std::string>();
  std::set<std::string> configurations;
  forEachAutotunedLaunch(plans, [&](json& kernel) {
    for (const auto& a : kernel["autotune"].at("alternatives")) configurations.insert(a.at("name").get<std::string>());
  });
  if (configurations.empty()) return whole;

  std::map<std::string, std::string> refused;  // kernel -> ptxas's first error
  try {
    const NvrtcCompiler compiler(CompileOptions{.arch = arch, .lineinfo = false}, {});
    for (const auto& name : configurations) {
      const auto it = code.find(name);
      if (it == code.end()) continue;  // not Triton's: the module's build will say
      const CompileOutput built = compiler.compile(it->second, {name});
      if (built.status == CompileOutput::Status::compileError) refused[name] = firstErrorLine(built.log);
    }
  } catch (const std::exception& e) {
    log += fmt::format("autotuned configurations not assembled alone for {}: {}\n", arch, e.what());
    return whole;
  }
  std::set<std::string> said;
  forEachAutotunedLaunch(plans, [&](json& kernel) {
    json& tuning = kernel["autotune"];
    json kept = json::array(), names = json::array();
    for (std::size_t i = 0; i < tuning.at("alternatives").size(); ++i) {
      const json& a = tuning["alternatives"][i];
      const std::string name = a.at("name");
      if (!refused.contains(name)) {
        kept.push_back(a);
        names.push_back(tuning["configs"][i]);
      } else if (said.insert(name).second) {
        log += fmt::format("autotune {}: {} is not timed on the GPU: ptxas refuses it ({})\n", tuning.value("key", std::string()),
                           tuning["configs"][i].get<std::string>(), refused[name]);
      }
    }
    if (kept.empty()) return;  // every configuration refused: the build fails, as Triton's call would
    for (const char* field : {"name", "grid", "block", "shared", "args"}) {
      if (kept[0].contains(field)) kernel[field] = kept[0][field];
    }
    if (kept.size() == 1) {
      kernel.erase("autotune");
    } else {
      tuning["alternatives"] = kept;
      tuning["configs"] = names;
    }
  });

  // The code of every kernel a launch still names: not a configuration left out, here or by the recorder
  // (one over the shared memory a block can have is compiled, never launched, and may not assemble).
  std::set<std::string> launched;
  for (auto& [set, plan] : plans.items()) {
    for (const auto& step : plan.at("steps")) {
      if (!step.contains("kernel")) continue;
      launched.insert(step["kernel"].at("name").get<std::string>());
      if (step["kernel"].contains("autotune")) {
        for (const auto& a : step["kernel"]["autotune"].at("alternatives")) launched.insert(a.at("name").get<std::string>());
      }
    }
  }
  std::string source;
  for (const auto& k : triton.at("kernels")) {
    const std::string name = k.at("name");
    if (launched.contains(name)) source += k.at("code").get<std::string>();
  }
  return source;
}

}  // namespace cuset::detail
