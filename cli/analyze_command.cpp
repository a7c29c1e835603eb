// `cuset analyze --model DIR --data FILE --out DIR`
#include <fmt/format.h>

#include "commands.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/reports/analysis_report.hpp"
#include "cuset/trainer/analysis.hpp"

namespace cuset::cli {

void registerAnalyzeCommand(CLI::App& app, CommandContext& context) {
  auto o = std::make_shared<AnalysisOptions>();
  auto out = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("analyze", "Token confidence of sensitive vs other code: analysis.json and analysis.html");
  cmd->add_option("--model", o->modelDir, "HF model folder (config.json, model.safetensors, tokenizer.json)")->required();
  cmd->add_option("--data", o->dataFile, "Chat JSONL ({\"instruction\",\"response\"} or {\"messages\"})")->required();
  cmd->add_option("--out", *out, "Folder for analysis.json and analysis.html")->required();
  cmd->add_option("--max-samples", o->maxSamples, "Samples to read at most")->capture_default_str();
  cmd->add_option("--heatmap-samples", o->heatmapSamples, "Samples shown in the heat map")->capture_default_str();
  cmd->add_option("--high-confidence", o->highConfidence, "Confidence counted as high")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  cmd->add_option("--region-threshold", o->regions.regionThreshold, "Regions: sensitive tokens below this confidence")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--region-gap", o->regions.regionGap, "Regions: merge across gaps of at most this many tokens")->capture_default_str();
  cmd->add_option("--region-min-tokens", o->regions.regionMinTokens, "Regions: at least this many low-confidence sensitive tokens")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "LibTorch threads (0: its default)");
  cmd->add_option("--device", o->device, "cpu, cuda or auto")->capture_default_str();
  cmd->add_flag("--quiet,-q", *quiet, "No progress bar");
  cmd->callback([=, &context] {
    o->showProgress = !*quiet;
    const nlohmann::json analysis = analyzeModel(*o);
    std::filesystem::create_directories(*out);
    writeFileAtomic(std::filesystem::path(*out) / "analysis.json", dumpJson(analysis, 2) + "\n");
    writeFileAtomic(std::filesystem::path(*out) / "analysis.html", renderAnalysisHtml(analysis));
    const auto& s = analysis["sensitive"];
    const auto& other = analysis["other"];
    fmt::print("{} samples: sensitive tokens {} (mean confidence {:.3f}, {:.1f}% high), other {} (mean {:.3f}, {:.1f}% high); {} regions\n",
               analysis["samples"].get<long>(), s["tokens"].get<long>(), s["mean"].get<double>(), 100 * s["high_confidence_share"].get<double>(),
               other["tokens"].get<long>(), other["mean"].get<double>(), 100 * other["high_confidence_share"].get<double>(),
               analysis["regions"]["count"].get<long>());
    fmt::print("wrote {}/analysis.json and {}/analysis.html\n", *out, *out);
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
