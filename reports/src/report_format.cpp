#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuset/reports/renderers.hpp"
#include "web_assets.hpp"

namespace cuset {

std::string htmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::vector<int> passAtKColumns(const nlohmann::json& model) {
  if (model.contains("pass_at_k_values") && model["pass_at_k_values"].is_array()) return model["pass_at_k_values"].get<std::vector<int>>();
  return {1, 5, 10};
}

std::string markdownCell(std::string text) {
  for (char& ch : text) {
    if (ch == '\n' || ch == '\r') ch = ' ';
  }
  std::string out;
  for (char ch : text) {
    if (ch == '|')
      out += "\\|";
    else
      out += ch;
  }
  return out;
}

std::string formatPercent(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }

std::string originText(const nlohmann::json& origin) {
  if (!origin.is_object()) return "";
  std::string text = fmt::format("{} {}", origin.value("suite", ""), origin.value("file", ""));
  if (const std::string commit = origin.value("commit", ""); !commit.empty()) text += " @ " + commit;
  return text;
}

std::string describeRun(const nlohmann::json& summary) {
  const nlohmann::json run = summary.value("run", nlohmann::json::object());
  std::vector<std::string> parts;
  const std::string backend = run.value("backend", "?");
  if (summary.value("timing", "none") == "gpu") {
    parts.push_back(fmt::format("backend {} (GPU timing)", backend));
  } else {
    parts.push_back(fmt::format("backend {} ({})", backend, backend == "sim" ? "CPU simulator: no GPU timing, no speedups" : "no GPU timing"));
  }
  if (run.contains("environment") && run["environment"].is_object()) {
    const auto& env = run["environment"];
    if (env.contains("gpu") && env["gpu"].is_string()) parts.push_back(env["gpu"].get<std::string>());
    for (const char* key : {"cuset_version", "git_revision", "cuda_toolkit", "nvrtc", "libtorch"}) {
      if (env.contains(key) && env[key].is_string()) parts.push_back(fmt::format("{} {}", key, env[key].get<std::string>()));
    }
  }
  if (run.contains("seed")) parts.push_back(fmt::format("seed {}", run["seed"].is_string() ? run["seed"].get<std::string>() : run["seed"].dump()));
  if (run.contains("started")) parts.push_back(fmt::format("started {}", run["started"].get<std::string>()));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " · ") + p;
  return out;
}

std::string coverageText(const nlohmann::json& coverage) {
  if (!coverage.is_object() || !coverage.contains("levels")) return "";
  const auto& levels = coverage["levels"];
  const nlohmann::json all = levels.value("all", nlohmann::json::object());
  std::vector<std::string> perLevel;
  for (const auto& [level, c] : levels.items()) {
    if (level != "all") perLevel.push_back(fmt::format("level {}: {}", level == "0" ? "other" : level, c.value("problems", 0)));
  }
  std::string text = fmt::format("Covers {} problem(s)", all.value("problems", 0));
  for (std::size_t i = 0; i < perLevel.size(); ++i) text += (i == 0 ? " (" : ", ") + perLevel[i] + (i + 1 == perLevel.size() ? ")" : "");
  std::vector<std::string> suites;
  const nlohmann::json suitesCovered = coverage.value("suites", nlohmann::json::object());
  for (const auto& [suite, s] : suitesCovered.items()) {
    const auto commits = s.value("commits", std::vector<std::string>{});
    std::string commitText;
    for (const auto& c : commits) commitText += (commitText.empty() ? " @ " : ", ") + c;
    suites.push_back(fmt::format("{} from {}{}", s.value("problems", 0), suite, commitText));
  }
  for (std::size_t i = 0; i < suites.size(); ++i) text += (i == 0 ? "; " : ", ") + suites[i];
  text += ".";
  if (const int flagged = all.value("flagged", 0); flagged > 0) {
    text +=
        coverage.value("include_defective", false)
            ? fmt::format(" {} flagged defective (the reference is degenerate or stochastic) and counted in the metrics (--include-defective).",
                          flagged)
            : fmt::format(
                  " {} flagged defective (the reference is degenerate or stochastic) and left out of the metrics (--include-defective counts them).",
                  flagged);
  }
  if (const auto sizes = coverage.value("sizes", nlohmann::json::object()); !sizes.empty()) {
    std::vector<std::string> parts;
    for (const auto& [set, n] : sizes.items()) parts.push_back(fmt::format("{} at {}", n.get<int>(), set));
    text += fmt::format(" Verdicts by the size sets they ran at: {}.", fmt::join(parts, ", "));
  }
  if (const int unsupported = all.value("unsupported", 0); unsupported > 0) {
    text += fmt::format(" {} unsupported on this backend (no size set it runs, or a reference that cannot run): outside every rate.", unsupported);
  }
  return text;
}

const char* sortableTablesScript() { return web::sortableTablesJs; }

const char* simplePageStyle() { return web::pageCss; }

}  // namespace cuset
