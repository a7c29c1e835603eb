#include "cuset/evaluator/compile/nvrtc_compiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/hash.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/log.hpp"
#include "cuset/common/resources.hpp"
#include "cuset/evaluator/compile/cubin_symbols.hpp"
#include "cuset/evaluator/compile/nvrtc_prelude.hpp"
#include "nvrtc_check.hpp"
#include "nvrtc_isolation.hpp"
#include "nvrtc_raw.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

// NVRTC reports an unknown name expression as an error in its synthetic "__nv_name_map" file.
std::vector<std::string> unresolvedNameExpressions(const std::string& log) {
  static const std::regex kExpr(R"(Input name expression was: "\s*([^"]*)\")");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), kExpr); it != std::sregex_iterator(); ++it) {
    std::string n = (*it)[1].str();
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  return names;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::string_view statusName(CompileOutput::Status s) {
  switch (s) {
    case CompileOutput::Status::ok:
      return "ok";
    case CompileOutput::Status::compileError:
      return "compile_error";
    case CompileOutput::Status::missingKernels:
      return "missing_kernels";
  }
  return "?";
}

}  // namespace

std::string NvrtcCompiler::nvrtcVersion() {
  int major = 0, minor = 0;
  CUSET_NVRTC_CHECK(::nvrtcVersion(&major, &minor));
  return fmt::format("{}.{}", major, minor);
}

std::vector<int> NvrtcCompiler::supportedArchs() {
  int count = 0;
  CUSET_NVRTC_CHECK(nvrtcGetNumSupportedArchs(&count));
  std::vector<int> archs(static_cast<std::size_t>(count));
  CUSET_NVRTC_CHECK(nvrtcGetSupportedArchs(archs.data()));
  return archs;
}

NvrtcCompiler::NvrtcCompiler(CompileOptions options, fs::path cacheDir) : options_(std::move(options)), cacheDir_(std::move(cacheDir)) {
  static const std::regex kArch("(sm|compute)_([0-9]+)a?");
  std::smatch match;
  if (!std::regex_match(options_.arch, match, kArch)) {
    throw makeError("--arch '{}' is not a CUDA architecture (expected e.g. sm_90 for a cubin or compute_90 for PTX)", options_.arch);
  }
  const int number = std::stoi(match[2].str());
  const auto archs = supportedArchs();
  if (std::find(archs.begin(), archs.end(), number) == archs.end()) {
    std::string list;
    for (int a : archs) list += fmt::format("{}sm_{}", list.empty() ? "" : ", ", a);
    throw makeError("--arch {}: NVRTC {} does not support it (supported: {})", options_.arch, nvrtcVersion(), list);
  }
  if (options_.cudaIncludeDir.empty()) {
    const char* env = std::getenv("CUSET_CUDA_INCLUDE");
    options_.cudaIncludeDir = (env && *env) ? fs::path(env) : resources().path("cuda_include");
  }
  if (!fs::exists(options_.cudaIncludeDir / "cuda_fp16.h")) {
    throw makeError("CUDA headers not found: {} has no cuda_fp16.h (set CUSET_CUDA_INCLUDE to the toolkit's include folder)",
                    options_.cudaIncludeDir.string());
  }
  optionStrings_ = {"--gpu-architecture=" + options_.arch, "--std=c++17", "-I" + options_.cudaIncludeDir.string(),
                    fmt::format("--pre-include={}", kPreludeHeaderName)};
  // CUDA 13 keeps libcu++, CUB and Thrust under include/cccl, and cooperative_groups.h itself
  // includes <cuda/std/type_traits>: without this path even cooperative groups fail to compile.
  if (fs::exists(options_.cudaIncludeDir / "cccl" / "cuda" / "std")) optionStrings_.push_back("-I" + (options_.cudaIncludeDir / "cccl").string());
  if (options_.lineinfo) optionStrings_.emplace_back("-lineinfo");
  for (const auto& o : options_.extraOptions) optionStrings_.push_back(o);
  if (options_.isolated) helpers_ = std::make_shared<detail::NvrtcHelperPool>(options_.timeout);
}

CompileOutput NvrtcCompiler::compile(std::string_view source, const std::vector<std::string>& kernelNames) const {
  const auto start = std::chrono::steady_clock::now();
  std::string key;
  if (!cacheDir_.empty()) {
    key = cacheKey(source, kernelNames);
    if (auto cached = loadCached(key)) {
      cached->cacheHit = true;
      cached->milliseconds = millisecondsSince(start);
      return std::move(*cached);
    }
  }
  CompileOutput out = compileUncached(source, kernelNames);
  out.milliseconds = millisecondsSince(start);
  if (!cacheDir_.empty() && !out.uncacheable) {
    try {
      storeCached(key, out);
    } catch (const Error& e) {
      log::warn("compile cache: {}", e.what());  // a full disk must not fail the evaluation
    }
  }
  return out;
}

CompileOutput NvrtcCompiler::compileUncached(std::string_view source, const std::vector<std::string>& kernelNames) const {
  const bool cubin = options_.arch.rfind("sm_", 0) == 0;
  CompileOutput out;
  out.isCubin = cubin;
  std::vector<std::string> options = optionStrings_;
  if (sourceNeedsHalfTypes(source)) options.emplace_back("-DCUSET_NEEDS_HALF_TYPES");
  std::optional<std::string> failed;  // no result at all: the time limit, or a helper that died
  auto runNvrtc = [&](const std::vector<std::string>& names) {
    if (!helpers_) return detail::runNvrtc(source, options, names, cubin);
    auto r = helpers_->compile(source, options, names, cubin);
    if (r) return std::move(*r);
    failed = r.error();
    return detail::RawCompile{};
  };
  detail::RawCompile raw = runNvrtc(kernelNames);
  if (failed) {
    out.status = CompileOutput::Status::compileError;
    out.log = "cuset: " + *failed;
    out.uncacheable = true;
    return out;
  }
  if (!raw.ok) {
    if (raw.log.find("__nv_name_map") == std::string::npos) {
      out.status = CompileOutput::Status::compileError;
      out.log = std::move(raw.log);
      return out;
    }
    // A manifest kernel name did not resolve. Compile without the names to tell "the source is broken"
    // (compile_error with a clean log) from "the source is fine but lacks that kernel".
    detail::RawCompile plain = runNvrtc({});
    out.log = failed ? "cuset: " + *failed : std::move(plain.log);
    out.uncacheable = failed.has_value();
    if (failed || !plain.ok) {
      out.status = CompileOutput::Status::compileError;
      return out;
    }
    out.status = CompileOutput::Status::missingKernels;
    out.missingKernels = unresolvedNameExpressions(raw.log);
    if (out.missingKernels.empty()) out.missingKernels = kernelNames;
    return out;
  }
  out.log = std::move(raw.log);
  out.image = std::move(raw.image);
  out.loweredNames = std::move(raw.lowered);
  std::vector<std::string> entries;
  if (cubin) {
    auto names = cubinKernelNames(out.image);
    if (!names) throw makeError("NVRTC produced an unreadable cubin: {}", names.error());
    entries = std::move(names).value();
  } else {
    entries = ptxKernelNames(std::string_view(reinterpret_cast<const char*>(out.image.data()), out.image.size()));
  }
  for (const auto& [name, symbol] : out.loweredNames) {
    if (std::find(entries.begin(), entries.end(), symbol) == entries.end()) out.missingKernels.push_back(name);
  }
  if (cubin) {
    auto resources = cubinKernelResources(out.image);
    if (!resources) throw makeError("NVRTC produced an unreadable cubin: {}", resources.error());
    for (const auto& [name, symbol] : out.loweredNames) {
      if (auto it = resources->find(symbol); it != resources->end()) out.resources[name] = it->second;
    }
  }
  if (!out.missingKernels.empty()) out.status = CompileOutput::Status::missingKernels;
  return out;
}

std::string NvrtcCompiler::cacheKey(std::string_view source, const std::vector<std::string>& kernelNames) const {
  static const std::string version = nvrtcVersion();
  ContentHasher h;
  h.add("cuset-compile-cache-v3").add(version).add(nvrtcPreludeVersion());
  for (const auto& o : optionStrings_) h.add(o);
  h.add("names");
  for (const auto& n : kernelNames) h.add(n);
  h.add(source);
  return h.digest().hex();
}

std::optional<CompileOutput> NvrtcCompiler::loadCached(const std::string& key) const {
  const fs::path meta = cacheDir_ / key.substr(0, 2) / (key + ".json");
  std::error_code ec;
  if (!fs::exists(meta, ec)) return std::nullopt;
  try {
    const nlohmann::json j = readJsonFile(meta);
    CompileOutput out;
    const std::string status = j.at("status").get<std::string>();
    if (status == "ok")
      out.status = CompileOutput::Status::ok;
    else if (status == "compile_error")
      out.status = CompileOutput::Status::compileError;
    else if (status == "missing_kernels")
      out.status = CompileOutput::Status::missingKernels;
    else
      throw Error("unknown status " + status);
    out.log = j.at("log").get<std::string>();
    out.isCubin = j.at("is_cubin").get<bool>();
    out.loweredNames = j.at("lowered_names").get<std::map<std::string, std::string>>();
    out.missingKernels = j.at("missing_kernels").get<std::vector<std::string>>();
    for (const auto& [name, r] : j.at("kernel_resources").items()) {
      out.resources[name] = KernelResources{r.at("static_shared_bytes").get<std::size_t>(), r.at("registers").get<unsigned>(),
                                            r.at("max_threads").get<unsigned>(), r.at("local_bytes").get<std::size_t>()};
    }
    if (j.contains("image_hash")) {
      out.image = readBinaryFile(cacheDir_ / key.substr(0, 2) / (key + ".bin"));
      if (hashBytes(out.image.data(), out.image.size()).hex() != j.at("image_hash").get<std::string>()) {
        throw Error("image does not match its recorded hash");
      }
    }
    return out;
  } catch (const std::exception& e) {
    log::warn("compile cache entry {} is unusable ({}); recompiling", meta.string(), e.what());
    return std::nullopt;
  }
}

void NvrtcCompiler::storeCached(const std::string& key, const CompileOutput& output) const {
  const fs::path dir = cacheDir_ / key.substr(0, 2);
  nlohmann::json j = {{"status", statusName(output.status)},
                      {"log", output.log},
                      {"is_cubin", output.isCubin},
                      {"lowered_names", output.loweredNames},
                      {"missing_kernels", output.missingKernels},
                      {"kernel_resources", nlohmann::json::object()}};
  for (const auto& [name, r] : output.resources) {
    j["kernel_resources"][name] = {
        {"static_shared_bytes", r.staticSharedBytes}, {"registers", r.registers}, {"max_threads", r.maxThreads}, {"local_bytes", r.localBytes}};
  }
  if (!output.image.empty()) {
    // The image goes first: the metadata file's presence is what marks an entry complete.
    writeFileAtomic(dir / (key + ".bin"), output.image.data(), output.image.size());
    j["image_hash"] = hashBytes(output.image.data(), output.image.size()).hex();
  }
  writeFileAtomic(dir / (key + ".json"), dumpJson(j));
}

}  // namespace cuset
