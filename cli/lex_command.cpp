// `cuset lex [--input FILE] [--jsonl]`: the CUDA-sensitive spans of code (DESIGN §5).
#include <fmt/format.h>

#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/trainer/sensitivity_lexer.hpp"

namespace cuset::cli {

void registerLexCommand(CLI::App& app, CommandContext& context) {
  auto input = std::make_shared<std::string>();
  auto jsonl = std::make_shared<bool>(false);
  CLI::App* lex = app.add_subcommand("lex", "Print the CUDA-sensitive spans of code (start, end, category, text)");
  lex->add_option("--input", *input, "File to read (default: standard input)");
  lex->add_flag("--jsonl", *jsonl, "Each input line is a JSON string; print one JSON array of {start, end, category} per line");
  lex->callback([=, &context] {
    const std::string source = input->empty() ? std::string("<stdin>") : *input;
    std::string text;
    if (input->empty())
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    else
      text = readFile(*input);
    const SensitivityLexer lexer;
    if (!*jsonl) {
      for (const auto& s : lexer.analyze(text)) {
        std::string snippet = text.substr(s.start, s.end - s.start);
        for (char& c : snippet) {
          if (c == '\n') c = ' ';
        }
        fmt::print("{}\t{}\t{}\t{}\n", s.start, s.end, sensitivityCategoryName(s.category), snippet);
      }
      context.exitCode = 0;
      return;
    }
    std::size_t lineNo = 0, start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      ++lineNo;
      const std::string_view line(text.data() + start, end - start);
      start = end + 1;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      nlohmann::json value;
      try {
        value = parseJson(line, fmt::format("{}:{}", source, lineNo));
      } catch (const Error& e) {
        throw makeError("{}", e.what());
      }
      if (!value.is_string()) throw makeError("{}:{}: expected a JSON string (the code), got {}", source, lineNo, value.type_name());
      nlohmann::json spans = nlohmann::json::array();
      for (const auto& s : lexer.analyze(value.get<std::string>())) {
        spans.push_back({{"start", s.start}, {"end", s.end}, {"category", sensitivityCategoryName(s.category)}});
      }
      fmt::print("{}\n", spans.dump());
    }
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
