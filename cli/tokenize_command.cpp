// `cuset tokenize`
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/trainer/tokenizer.hpp"

namespace cuset::cli {

void registerTokenizeCommand(CLI::App& app, CommandContext& context) {
  struct Config {
    std::string tokenizer;
    std::string input;
    bool jsonl = false;
  };
  auto config = std::make_shared<Config>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Encode text with a Hugging Face tokenizer.json (byte-level BPE)");
  cmd->add_option("--tokenizer", config->tokenizer, "tokenizer.json")->required();
  cmd->add_option("--input", config->input, "Input file (default: standard input)");
  cmd->add_flag("--jsonl", config->jsonl, "Each input line is a JSON string; print one JSON array of ids per line");
  cmd->callback([config, &context] {
    const BpeTokenizer tokenizer = BpeTokenizer::load(config->tokenizer);
    std::ifstream file;
    if (!config->input.empty()) {
      file.open(config->input, std::ios::binary);
      if (!file) throw makeError("{}: cannot open", config->input);
    }
    std::istream& in = config->input.empty() ? std::cin : file;
    const std::string source = config->input.empty() ? "<stdin>" : config->input;
    if (!config->jsonl) {
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      fmt::print("{}\n", nlohmann::json(tokenizer.encode(text).ids).dump());
      return;
    }
    std::string line;
    std::size_t lineNo = 0;
    while (std::getline(in, line)) {
      ++lineNo;
      nlohmann::json value;
      try {
        value = nlohmann::json::parse(line);
      } catch (const nlohmann::json::parse_error& e) {
        throw makeError("{}:{}: not a JSON string: {}", source, lineNo, e.what());
      }
      if (!value.is_string()) throw makeError("{}:{}: expected a JSON string", source, lineNo);
      fmt::print("{}\n", nlohmann::json(tokenizer.encode(value.get<std::string>()).ids).dump());
    }
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
