#include <fmt/format.h>

#include <map>

#include "cuset/reports/renderers.hpp"

namespace cuset {
namespace {

// XML 1.0 forbids most control characters even as references; compile logs can hold them.
std::string xmlEscape(const std::string& text) {
  std::string clean = text;
  for (char& ch : clean) {
    if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') ch = '?';
  }
  return htmlEscape(clean);
}

}  // namespace

std::string renderJunit(const nlohmann::json& summary, const std::vector<EvalResult>& results) {
  // One suite per (model, level): CI systems group test cases by suite and class name.
  std::map<std::pair<std::string, std::string>, std::vector<const EvalResult*>> suites;
  for (const auto& r : results) {
    const std::string level = r.problem.substr(0, r.problem.find('/'));
    suites[{r.model, level}].push_back(&r);
  }
  std::size_t failures = 0;
  double seconds = 0.0;
  std::size_t skipped = 0;
  for (const auto& r : results) {
    failures += !isSuccess(r.verdict) && r.verdict != Verdict::unsupported;
    skipped += r.verdict == Verdict::unsupported;
    seconds += r.timings.totalMs / 1000.0;
  }
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format("<testsuites name=\"cuset\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n", results.size(), failures, skipped,
                     seconds);
  for (const auto& [key, cases] : suites) {
    std::size_t suiteFailures = 0, suiteSkipped = 0;
    double suiteSeconds = 0.0;
    for (const auto* r : cases) {
      suiteFailures += !isSuccess(r->verdict) && r->verdict != Verdict::unsupported;
      suiteSkipped += r->verdict == Verdict::unsupported;
      suiteSeconds += r->timings.totalMs / 1000.0;
    }
    xml += fmt::format("  <testsuite name=\"{}.{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" errors=\"0\" time=\"{:.3f}\">\n",
                       xmlEscape(key.first), xmlEscape(key.second), cases.size(), suiteFailures, suiteSkipped, suiteSeconds);
    xml += fmt::format("    <properties><property name=\"backend\" value=\"{}\"/></properties>\n",
                       xmlEscape(summary.value("run", nlohmann::json::object()).value("backend", "")));
    for (const auto* r : cases) {
      const std::string name = fmt::format("{} sample {}", r->problem.substr(r->problem.find('/') + 1), r->sample);
      xml += fmt::format("    <testcase classname=\"{}.{}\" name=\"{}\" time=\"{:.3f}\"", xmlEscape(key.first), xmlEscape(key.second),
                         xmlEscape(name), r->timings.totalMs / 1000.0);
      if (isSuccess(r->verdict)) {
        xml += "/>\n";
        continue;
      }
      if (r->verdict == Verdict::unsupported) {  // the harness could not judge it: skipped, not failed
        xml += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", xmlEscape(r->reason));
        continue;
      }
      const std::string message = fmt::format("{}: {}", verdictName(r->verdict), r->reason);
      xml += fmt::format(">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n", verdictName(r->verdict), xmlEscape(message),
                         xmlEscape(message + (r->compileLog.empty() ? "" : "\n\n" + r->compileLog)));
      xml += fmt::format("      <system-out>{}</system-out>\n    </testcase>\n", xmlEscape("origin: " + r->origin));
    }
    xml += "  </testsuite>\n";
  }
  xml += "</testsuites>\n";
  return xml;
}

}  // namespace cuset
