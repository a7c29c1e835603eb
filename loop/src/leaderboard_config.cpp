#include "cuset/loop/leaderboard_config.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <regex>
#include <set>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/yaml_util.hpp"

namespace fs = std::filesystem;

namespace cuset {
namespace {

fs::path resolveAgainst(const fs::path& base, const std::string& p) {
  return fs::path(p).is_absolute() ? fs::path(p) : (base / p).lexically_normal();
}

// Settings a model may take from the file's `generation:` block or override itself.
void readGeneration(const YamlReader& y, const YAML::Node& n, std::string_view path, const fs::path& base, LeaderboardModel& m) {
  auto field = [&](const char* key) { return joinPath(path, key); };
  if (auto v = n["temperature"]) m.temperature = y.asDouble(v, field("temperature"));
  if (auto v = n["top_p"]) m.topP = y.asDouble(v, field("top_p"));
  if (auto v = n["max_tokens"]) m.maxTokens = static_cast<int>(y.asInt64(v, field("max_tokens")));
  if (auto v = n["seed"]) m.seed = static_cast<std::uint64_t>(y.asInt64(v, field("seed")));
  if (auto v = n["prompt"]) {
    const auto style = parsePromptStyle(y.asString(v, field("prompt")));
    if (!style) y.fail(v, field("prompt"), "expected cuset, kernelbench or kernelbench-native");
    m.prompt = *style;
  }
  if (auto v = n["kernelbench"]) m.kernelbenchRoot = resolveAgainst(base, y.asString(v, field("kernelbench")));
  if (auto v = n["concurrency"]) m.endpoint.concurrency = static_cast<int>(y.asInt64(v, field("concurrency")));
  if (auto v = n["request_timeout"])
    m.endpoint.requestTimeout = std::chrono::milliseconds(static_cast<long long>(y.asDouble(v, field("request_timeout")) * 1000));
  if (auto v = n["max_retries"]) m.endpoint.retry.maxRetries = static_cast<int>(y.asInt64(v, field("max_retries")));
  if (auto v = n["retry_delay"]) m.endpoint.retry.base = std::chrono::duration<double>(y.asDouble(v, field("retry_delay")));
  if (auto v = n["use_n"]) m.useN = y.asBool(v, field("use_n"));
  if (m.temperature < 0 || m.topP <= 0 || m.topP > 1) y.fail(n, path, "expected temperature >= 0 and 0 < top_p <= 1");
  if (m.maxTokens < 1) y.fail(n, field("max_tokens"), "must be >= 1");
  if (m.endpoint.concurrency < 1 || m.endpoint.concurrency > 1024) y.fail(n, field("concurrency"), "must be in 1..1024");
}

}  // namespace

LeaderboardConfig LeaderboardConfig::load(const fs::path& path) try {
  YamlReader y(path.string());
  const YAML::Node root = y.parse(readFile(path));
  y.onlyKeys(root, "", {"name", "out", "problems", "k", "generation", "models", "eval"});
  LeaderboardConfig c;
  c.source = path;
  const fs::path base = path.parent_path();
  c.name = root["name"] ? y.asString(root["name"], "name") : path.stem().string();
  c.outDir = root["out"] ? resolveAgainst(base, y.asString(root["out"], "out")) : fs::path("runs") / ("leaderboard-" + c.name);
  c.problemsDir = resolveAgainst(base, y.asString(y.require(root, "problems", ""), "problems"));
  if (!fs::is_directory(c.problemsDir)) y.fail(root["problems"], "problems", fmt::format("{} is not a folder", c.problemsDir.string()));
  if (auto k = root["k"]) {
    c.k = static_cast<int>(y.asInt64(k, "k"));
    if (c.k < 1 || c.k > 1000) y.fail(k, "k", "must be in 1..1000");
  }

  LeaderboardModel defaults;
  if (auto g = root["generation"]) {
    y.onlyKeys(g, "generation",
               {"temperature", "top_p", "max_tokens", "seed", "prompt", "kernelbench", "concurrency", "request_timeout", "max_retries", "retry_delay",
                "use_n"});
    readGeneration(y, g, "generation", base, defaults);
  }

  const YAML::Node models = y.require(root, "models", "");
  y.expectSequence(models, "models");
  if (models.size() == 0) y.fail(models, "models", "list at least one model");
  std::set<std::string> names;
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9._-]*");
  for (std::size_t i = 0; i < models.size(); ++i) {
    const YAML::Node n = models[i];
    const std::string p = indexPath("models", i);
    y.expectMap(n, p);
    y.onlyKeys(n, p,
               {"name", "endpoint", "model", "api_key_env", "ca_bundle", "checkpoint", "price", "temperature", "top_p", "max_tokens", "seed",
                "prompt", "kernelbench", "concurrency", "request_timeout", "max_retries", "retry_delay", "use_n"});
    LeaderboardModel m = defaults;
    m.name = y.asString(y.require(n, "name", p), joinPath(p, "name"));
    if (!std::regex_match(m.name, kName)) y.fail(n["name"], joinPath(p, "name"), "use letters, digits, '.', '_' and '-' (it names a folder)");
    if (!names.insert(m.name).second) y.fail(n["name"], joinPath(p, "name"), fmt::format("model name '{}' is used twice", m.name));
    if (n["endpoint"] && n["checkpoint"]) y.fail(n, p, "give either 'endpoint' (with 'model') or 'checkpoint', not both");
    if (auto e = n["endpoint"]) {
      m.endpoint.baseUrl = y.asString(e, joinPath(p, "endpoint"));
      m.servedModel = y.asString(y.require(n, "model", p), joinPath(p, "model"));
      if (auto v = n["api_key_env"]) m.endpoint.apiKeyEnv = y.asString(v, joinPath(p, "api_key_env"));
      if (auto v = n["ca_bundle"]) m.endpoint.caBundle = resolveAgainst(base, y.asString(v, joinPath(p, "ca_bundle")));
    } else if (auto ck = n["checkpoint"]) {
      m.checkpoint = resolveAgainst(base, y.asString(ck, joinPath(p, "checkpoint")));
      m.prompt = PromptStyle::cuset;  // what the built-in model is trained on, unless the entry says otherwise
      for (const char* key : {"model", "api_key_env", "ca_bundle", "concurrency", "request_timeout", "max_retries", "retry_delay", "use_n"}) {
        if (n[key]) y.fail(n[key], joinPath(p, key), "applies to endpoint models only");
      }
    } else {
      y.fail(n, p, "needs 'endpoint' (with 'model') or 'checkpoint'");
    }
    readGeneration(y, n, p, base, m);
    if (auto price = n["price"]) {
      const std::string pp = joinPath(p, "price");
      y.onlyKeys(price, pp, {"prompt_per_mtok", "completion_per_mtok"});
      if (auto v = price["prompt_per_mtok"]) m.promptPricePerMTok = y.asDouble(v, joinPath(pp, "prompt_per_mtok"));
      if (auto v = price["completion_per_mtok"]) m.completionPricePerMTok = y.asDouble(v, joinPath(pp, "completion_per_mtok"));
    }
    c.models.push_back(std::move(m));
  }

  if (auto e = root["eval"]) {
    y.onlyKeys(e, "eval", {"backend", "sizes", "trials", "seed", "timer", "max_timing_seconds", "jobs", "include_defective"});
    if (auto v = e["backend"]) {
      c.backend = y.asString(v, "eval.backend");
      if (c.backend != "sim" && c.backend != "cuda" && c.backend != "compile-only") y.fail(v, "eval.backend", "expected sim, cuda or compile-only");
    }
    if (auto v = e["sizes"]) c.sizes = y.asString(v, "eval.sizes");
    if (auto v = e["trials"]) c.trials = static_cast<int>(y.asInt64(v, "eval.trials"));
    if (auto v = e["seed"]) c.seed = static_cast<std::uint64_t>(y.asInt64(v, "eval.seed"));
    if (auto v = e["timer"]) c.timer = y.asString(v, "eval.timer");
    if (auto v = e["max_timing_seconds"]) c.maxTimingSeconds = y.asDouble(v, "eval.max_timing_seconds");
    if (auto v = e["jobs"]) c.jobs = static_cast<std::size_t>(y.asInt64(v, "eval.jobs"));
    if (auto v = e["include_defective"]) c.includeDefective = y.asBool(v, "eval.include_defective");
    if (c.trials < 1 || c.trials > 1000) y.fail(e, "eval.trials", "must be in 1..1000");
  }
  return c;
} catch (const YAML::Exception& e) {
  YamlReader(path.string()).failWith(e);
}

}  // namespace cuset
