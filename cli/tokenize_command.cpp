// `cuset tokenize`
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/trainer/tokenizer.hpp"

namespace cuset::cli {
namespace {

void decodeLines(const BpeTokenizer& tokenizer, std::istream& in, const std::string& source, bool skipSpecial) {
  std::string line;
  std::size_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    std::vector<std::int32_t> ids;
    try {
      ids = nlohmann::json::parse(line).get<std::vector<std::int32_t>>();
    } catch (const nlohmann::json::exception& e) {
      throw makeError("{}:{}: not a JSON array of token ids: {}", source, lineNo, e.what());
    }
    try {
      fmt::print("{}\n", nlohmann::json(tokenizer.decode(ids, skipSpecial)).dump());
    } catch (const Error& e) {
      throw makeError("{}:{}: {}", source, lineNo, e.what());
    }
  }
}

}  // namespace

void registerTokenizeCommand(CLI::App& app, CommandContext& context) {
  struct Config {
    std::string tokenizer;
    std::string input;
    bool jsonl = false;
    std::size_t threads = 0;
    bool stats = false;
    bool decode = false;
    bool skipSpecial = false;
  };
  auto config = std::make_shared<Config>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Encode text with a Hugging Face tokenizer.json (byte-level BPE)");
  cmd->add_option("--tokenizer", config->tokenizer, "tokenizer.json")->required();
  cmd->add_option("--input", config->input, "Input file (default: standard input)");
  cmd->add_flag("--jsonl", config->jsonl, "Each input line is a JSON string; print one JSON array of ids per line");
  cmd->add_option("--threads", config->threads, "--jsonl: encode lines on this many threads (0: one per core); output keeps input order")
      ->capture_default_str();
  cmd->add_flag("--stats", config->stats, "Print load and encode times and the encode throughput (MB/s) to stderr");
  cmd->add_flag("--decode", config->decode,
                "The other way: each input line is a JSON array of ids; print the decoded text as a JSON string per line");
  cmd->add_flag("--skip-special", config->skipSpecial, "--decode: leave special tokens out of the text");
  cmd->callback([config, &context] {
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    const BpeTokenizer tokenizer = BpeTokenizer::load(config->tokenizer);
    const double loadSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
    std::ifstream file;
    if (!config->input.empty()) {
      file.open(config->input, std::ios::binary);
      if (!file) throw makeError("{}: cannot open", config->input);
    }
    std::istream& in = config->input.empty() ? std::cin : file;
    const std::string source = config->input.empty() ? "<stdin>" : config->input;
    double encodeSeconds = 0;
    std::size_t bytes = 0;
    auto timed = [&](auto&& f) {
      const auto start = Clock::now();
      f();
      encodeSeconds += std::chrono::duration<double>(Clock::now() - start).count();
    };
    if (config->decode) {
      decodeLines(tokenizer, in, source, config->skipSpecial);
    } else if (!config->jsonl) {
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      Encoding e;
      timed([&] { e = tokenizer.encode(text); });
      bytes = text.size();
      fmt::print("{}\n", nlohmann::json(e.ids).dump());
    } else {
      // Batches of lines: encoded in parallel, printed in input order, memory bounded by the batch.
      constexpr std::size_t kBatch = 8192;
      std::vector<std::string> texts;
      std::string line;
      std::size_t lineNo = 0;
      auto flush = [&] {
        const std::vector<std::string_view> views(texts.begin(), texts.end());
        std::vector<Encoding> encoded;
        timed([&] { encoded = tokenizer.encodeBatch(views, config->threads); });
        std::string out;
        for (const auto& e : encoded) out += fmt::format("[{}]\n", fmt::join(e.ids, ","));  // as nlohmann's dump() writes it
        fmt::print("{}", out);
        texts.clear();
      };
      while (std::getline(in, line)) {
        ++lineNo;
        nlohmann::json value;
        try {
          value = nlohmann::json::parse(line);
        } catch (const nlohmann::json::exception& e) {
          throw makeError("{}:{}: not a JSON string: {}", source, lineNo, e.what());
        }
        if (!value.is_string()) throw makeError("{}:{}: expected a JSON string", source, lineNo);
        texts.push_back(value.get<std::string>());
        bytes += texts.back().size();
        if (texts.size() == kBatch) flush();
      }
      flush();
    }
    if (config->stats) {
      fmt::print(stderr, "tokenize: load {:.3f} s, encode {:.3f} s for {:.2f} MB of text: {:.2f} MB/s\n", loadSeconds, encodeSeconds,
                 static_cast<double>(bytes) / 1e6, encodeSeconds > 0 ? static_cast<double>(bytes) / 1e6 / encodeSeconds : 0.0);
    }
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
