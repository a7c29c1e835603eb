#include "cuset/common/yaml_util.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "cuset/common/error.hpp"

namespace cuset {

std::string joinPath(std::string_view parent, std::string_view child) {
  if (parent.empty()) return std::string(child);
  return fmt::format("{}.{}", parent, child);
}

std::string indexPath(std::string_view parent, std::size_t index) { return fmt::format("{}[{}]", parent, index); }

YAML::Node YamlReader::parse(std::string_view text) const {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw makeError("{}:{}:{}: invalid YAML: {}", source_, e.mark.line + 1 + lineOffset_, e.mark.column + 1, e.msg);
  }
}

void YamlReader::failWith(const YAML::Exception& e) const {
  if (e.mark.is_null()) throw makeError("{}: {}", source_, e.msg);
  throw makeError("{}:{}:{}: {}", source_, e.mark.line + 1 + lineOffset_, e.mark.column + 1, e.msg);
}

void YamlReader::fail(const YAML::Node& at, std::string_view path, std::string_view message) const {
  const YAML::Mark mark = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
  const std::string where = path.empty() ? std::string() : fmt::format(" field '{}':", path);
  if (mark.is_null()) throw makeError("{}:{} {}", source_, where, message);
  throw makeError("{}:{}:{} {}", source_, mark.line + 1 + lineOffset_, where, message);
}

void YamlReader::expectMap(const YAML::Node& node, std::string_view path) const {
  if (!node.IsMap()) fail(node, path, "expected a mapping (key: value pairs)");
}

void YamlReader::expectSequence(const YAML::Node& node, std::string_view path) const {
  if (!node.IsSequence()) fail(node, path, "expected a list");
}

void YamlReader::onlyKeys(const YAML::Node& map, std::string_view path, std::initializer_list<std::string_view> allowed) const {
  expectMap(map, path);
  std::vector<std::string> seen;
  for (const auto& entry : map) {
    const std::string key = asKey(entry.first, path);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (auto a : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
      // YAML splits `{grid: ceil_div(N, 16)}` at the comma, leaving "16)" as a key.
      const bool splitExpression = key.find_first_of("()") != std::string::npos;
      fail(entry.first, joinPath(path, key),
           fmt::format("unknown key (allowed: {}){}", list,
                       splitExpression ? "; an expression with commas inside a {...} mapping must be quoted" : ""));
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) fail(entry.first, joinPath(path, key), "duplicate key");
    seen.push_back(key);
  }
}

YAML::Node YamlReader::require(const YAML::Node& map, std::string_view key, std::string_view path) const {
  expectMap(map, path);
  YAML::Node child = map[std::string(key)];
  if (!child.IsDefined() || child.IsNull()) fail(map, joinPath(path, key), "required but missing");
  return child;
}

std::string YamlReader::asString(const YAML::Node& node, std::string_view path) const {
  if (!node.IsScalar()) fail(node, path, "expected a string");
  return node.Scalar();
}

std::string YamlReader::asKey(const YAML::Node& key, std::string_view path) const {
  // as<std::string>() would throw yaml-cpp's own exception past every caller (found by the fuzzers).
  if (!key.IsScalar()) fail(key, path, "keys must be plain names");
  return key.Scalar();
}

std::string YamlReader::asExpressionText(const YAML::Node& node, std::string_view path) const {
  if (!node.IsScalar()) fail(node, path, "expected an integer or an expression over size names");
  return node.Scalar();
}

std::vector<YamlReader::SequenceItem> YamlReader::expressionItems(const YAML::Node& sequence, std::string_view path) const {
  expectSequence(sequence, path);
  std::vector<SequenceItem> items;
  int depth = 0;
  for (std::size_t i = 0; i < sequence.size(); ++i) {
    const YAML::Node item = sequence[i];
    if (!item.IsScalar()) {
      if (depth > 0) fail(item, indexPath(path, i), "unbalanced parentheses in the previous item");
      items.push_back({item, "", indexPath(path, items.size())});
      continue;
    }
    const std::string& text = item.Scalar();
    if (depth > 0) {
      items.back().text += ", " + text;
    } else {
      items.push_back({item, text, indexPath(path, items.size())});
    }
    for (char c : text) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (depth < 0) fail(item, indexPath(path, i), "unbalanced ')'");
  }
  if (depth > 0) fail(sequence, path, "unbalanced '(' (a missing ')')");
  return items;
}

double YamlReader::asDouble(const YAML::Node& node, std::string_view path) const {
  if (!node.IsScalar()) fail(node, path, "expected a number");
  try {
    return node.as<double>();
  } catch (const YAML::Exception&) {
    fail(node, path, fmt::format("expected a number, got '{}'", node.Scalar()));
  }
}

std::int64_t YamlReader::asInt64(const YAML::Node& node, std::string_view path) const {
  if (!node.IsScalar()) fail(node, path, "expected an integer");
  const std::string& s = node.Scalar();
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) {
    fail(node, path, fmt::format("expected an integer, got '{}'", s));
  }
  return value;
}

bool YamlReader::asBool(const YAML::Node& node, std::string_view path) const {
  if (!node.IsScalar()) fail(node, path, "expected true or false");
  try {
    return node.as<bool>();
  } catch (const YAML::Exception&) {
    fail(node, path, fmt::format("expected true or false, got '{}'", node.Scalar()));
  }
}

}  // namespace cuset
