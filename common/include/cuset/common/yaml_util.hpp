#pragma once
// Strict YAML reading for user-written files (problem.yaml, launch manifests, configs): every error
// names the source, the dotted field path and, where yaml-cpp knows it, the line.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace cuset {

class YamlReader {
 public:
  // `source` names the input in messages: a file path, or "candidate 3 manifest".
  // `lineOffset` is added to yaml-cpp's line numbers when the YAML is embedded in a larger file.
  explicit YamlReader(std::string source, int lineOffset = 0) : source_(std::move(source)), lineOffset_(lineOffset) {}

  const std::string& source() const { return source_; }

  // Parses a document; a syntax error becomes cuset::Error "<source>:<line>:<col>: <problem>".
  YAML::Node parse(std::string_view text) const;

  [[noreturn]] void fail(const YAML::Node& at, std::string_view path, std::string_view message) const;

  // Runs `parse`, turning any yaml-cpp exception that escapes the checks (a subscript into a scalar,
  // a conversion) into this reader's error with file and line, so that a loader only ever throws
  // cuset::Error.
  template <class F>
  decltype(auto) guard(F&& parse) const {
    try {
      return parse();
    } catch (const YAML::Exception& e) {
      failWith(e);
    }
  }

  [[noreturn]] void failWith(const YAML::Exception& e) const;

  void expectMap(const YAML::Node& node, std::string_view path) const;
  void expectSequence(const YAML::Node& node, std::string_view path) const;
  // Rejects keys outside `allowed`, so a typo ("tolerence") is an error instead of silently ignored.
  void onlyKeys(const YAML::Node& map, std::string_view path, std::initializer_list<std::string_view> allowed) const;

  // Child of a map; throws if absent.
  YAML::Node require(const YAML::Node& map, std::string_view key, std::string_view path) const;

  std::string asString(const YAML::Node& node, std::string_view path) const;
  // A mapping key as a name: `? [a, b]: x` (a complex key) is valid YAML but names nothing of ours.
  std::string asKey(const YAML::Node& key, std::string_view path) const;
  double asDouble(const YAML::Node& node, std::string_view path) const;
  std::int64_t asInt64(const YAML::Node& node, std::string_view path) const;
  bool asBool(const YAML::Node& node, std::string_view path) const;

  // Scalar as a string; a number such as `64` or `5*M*N` (a string to YAML) comes back as written.
  std::string asExpressionText(const YAML::Node& node, std::string_view path) const;

  // Items of a sequence of expressions. YAML splits a flow sequence at every comma, so
  // `[ceil_div(N, 16), M]` arrives as "ceil_div(N", "16)", "M"; scalars are rejoined while their
  // parentheses are unbalanced, which gives back what the author meant. Non-scalar items pass through.
  struct SequenceItem {
    YAML::Node node;
    std::string text;  // rejoined scalar text; empty for non-scalars
    std::string path;
  };
  std::vector<SequenceItem> expressionItems(const YAML::Node& sequence, std::string_view path) const;

 private:
  std::string source_;
  int lineOffset_;
};

// "a.b" + "c" -> "a.b.c"; "" + "c" -> "c".
std::string joinPath(std::string_view parent, std::string_view child);
std::string indexPath(std::string_view parent, std::size_t index);

}  // namespace cuset
