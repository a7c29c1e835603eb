// Python's text of values, as the chat-template renderer needs it: str() and repr() of JSON data,
// json.dumps as transformers' tojson calls it, and the str methods strip and split.
#include "python_text.hpp"

#include <fmt/format.h>

#include <cmath>

#include "cuset/common/error.hpp"
#include "cuset/trainer/chat_template.hpp"

namespace cuset::jinja {
namespace {

void dumpString(const std::string& s, std::string& out) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

// Python's repr of a float: the shortest text that reads back, with ".0" when it looks integral.
std::string pythonFloat(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

void dumpJson(const Json& v, int indent, int depth, std::string& out) {
  const std::string newline = indent >= 0 ? "\n" + std::string(static_cast<std::size_t>(indent * (depth + 1)), ' ') : "";
  const std::string closing = indent >= 0 ? "\n" + std::string(static_cast<std::size_t>(indent * depth), ' ') : "";
  const std::string itemSeparator = indent >= 0 ? "," : ", ";
  switch (v.type()) {
    case Json::value_t::null:
      out += "null";
      break;
    case Json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      break;
    case Json::value_t::number_integer:
      out += std::to_string(v.get<std::int64_t>());
      break;
    case Json::value_t::number_unsigned:
      out += std::to_string(v.get<std::uint64_t>());
      break;
    case Json::value_t::number_float:
      out += pythonFloat(v.get<double>());
      break;
    case Json::value_t::string:
      dumpString(v.get_ref<const std::string&>(), out);
      break;
    case Json::value_t::array:
    case Json::value_t::object: {
      const bool object = v.is_object();
      if (v.empty()) {
        out += object ? "{}" : "[]";
        break;
      }
      out += object ? "{" : "[";
      bool first = true;
      for (const auto& item : v.items()) {
        if (!first) out += itemSeparator;
        first = false;
        out += newline;
        if (object) {
          dumpString(item.key(), out);
          out += ": ";
        }
        dumpJson(item.value(), indent, depth + 1, out);
      }
      out += closing + (object ? "}" : "]");
      break;
    }
    default:
      throw Error("tojson: a value JSON cannot hold");
  }
}

// Python's repr of a string: single quotes unless the text has one and no double quote.
std::string pythonRepr(const std::string& s) {
  const bool useDouble = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char q = useDouble ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == static_cast<unsigned char>(q) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + q;
}

}  // namespace

std::string pythonReprOf(const Json& j) { return j.is_string() ? pythonRepr(j.get<std::string>()) : pythonStr(j); }

std::string pythonStr(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return "None";
    case Json::value_t::boolean:
      return j.get<bool>() ? "True" : "False";
    case Json::value_t::number_integer:
      return std::to_string(j.get<std::int64_t>());
    case Json::value_t::number_unsigned:
      return std::to_string(j.get<std::uint64_t>());
    case Json::value_t::number_float: {
      const double d = j.get<double>();
      if (std::isnan(d)) return "nan";
      if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
      return pythonFloat(d);
    }
    case Json::value_t::string:
      return j.get<std::string>();
    case Json::value_t::array: {
      std::string out = "[";
      for (std::size_t i = 0; i < j.size(); ++i) out += (i ? ", " : "") + pythonReprOf(j[i]);
      return out + "]";
    }
    case Json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, v] : j.items()) {
        out += (first ? "" : ", ") + pythonRepr(k) + ": " + pythonReprOf(v);
        first = false;
      }
      return out + "}";
    }
    default:
      return "";
  }
}

bool isWhitespace(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string strip(const std::string& s, const std::string* chars, bool left, bool right) {
  auto drop = [&](unsigned char c) { return chars ? chars->find(static_cast<char>(c)) != std::string::npos : isWhitespace(c); };
  std::size_t b = 0, e = s.size();
  if (left) {
    while (b < e && drop(static_cast<unsigned char>(s[b]))) ++b;
  }
  if (right) {
    while (e > b && drop(static_cast<unsigned char>(s[e - 1]))) --e;
  }
  return s.substr(b, e - b);
}

Json splitString(const std::string& s, const std::optional<std::string>& separator, std::int64_t maxSplit) {
  Json out = Json::array();
  if (separator) {
    if (separator->empty()) throw Error("split(): empty separator");
    std::size_t start = 0;
    for (std::int64_t n = 0; maxSplit < 0 || n < maxSplit; ++n) {
      const std::size_t at = s.find(*separator, start);
      if (at == std::string::npos) break;
      out.push_back(s.substr(start, at - start));
      start = at + separator->size();
    }
    out.push_back(s.substr(start));
    return out;
  }
  std::size_t i = 0;  // whitespace runs, no empty pieces
  std::int64_t n = 0;
  while (i < s.size()) {
    while (i < s.size() && isWhitespace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) break;
    if (maxSplit >= 0 && n == maxSplit) {
      out.push_back(strip(s.substr(i), nullptr, false, true));
      break;
    }
    std::size_t e = i;
    while (e < s.size() && !isWhitespace(static_cast<unsigned char>(s[e]))) ++e;
    out.push_back(s.substr(i, e - i));
    ++n;
    i = e;
  }
  return out;
}

}  // namespace cuset::jinja

namespace cuset {

std::string pythonJsonDumps(const nlohmann::ordered_json& value, int indent) {
  std::string out;
  jinja::dumpJson(value, indent, 0, out);
  return out;
}

}  // namespace cuset
