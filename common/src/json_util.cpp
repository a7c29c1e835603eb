#include "cuset/common/json_util.hpp"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"

namespace cuset {

nlohmann::json parseJson(std::string_view text, std::string_view source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw makeError("{}: invalid JSON at byte {}: {}", source, e.byte, e.what());
  } catch (const nlohmann::json::exception& e) {  // a number beyond double's range (1e309) is out_of_range
    throw makeError("{}: invalid JSON: {}", source, e.what());
  }
}

nlohmann::json readJsonFile(const std::filesystem::path& path) { return parseJson(readFile(path), path.string()); }

void forEachJsonlLine(const std::filesystem::path& path, std::string_view what,
                      const std::function<void(const std::string& line, const std::string& where)>& visit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw makeError("{}: cannot open {}", path.string(), what);
  std::string line;
  std::size_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    visit(line, fmt::format("{}:{}", path.string(), lineNo));
  }
  if (in.bad()) throw makeError("{}: read failed", path.string());
}

void writeJsonFileAtomic(const std::filesystem::path& path, const nlohmann::json& value) { writeFileAtomic(path, dumpJson(value, 2) + "\n"); }

std::int64_t jsonInteger(const nlohmann::json& value, std::string_view what, std::int64_t min, std::int64_t max) {
  std::int64_t v = 0;
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) throw makeError("{}: {} is out of range", what, value.dump());
    v = static_cast<std::int64_t>(value.get<std::uint64_t>());
  } else if (value.is_number_integer()) {
    v = value.get<std::int64_t>();
  } else {
    throw makeError("{}: expected an integer, got {}", what, value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).substr(0, 40));
  }
  if (v < min || v > max) throw makeError("{}: {} is outside [{}, {}]", what, v, min, max);
  return v;
}

nlohmann::json jsonDouble(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

std::vector<nlohmann::json> jsonDoubles(const std::vector<double>& values) {
  std::vector<nlohmann::json> out;
  out.reserve(values.size());
  for (double v : values) out.push_back(jsonDouble(v));
  return out;
}

double doubleFromJson(const nlohmann::json& value, std::string_view what) {
  if (value.is_number()) return value.get<double>();
  if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    // Python's names, and the "nan"/"inf" that fmt and older results wrote.
    if (text == "NaN" || text == "nan" || text == "-nan") return std::numeric_limits<double>::quiet_NaN();
    if (text == "Infinity" || text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity" || text == "-inf") return -std::numeric_limits<double>::infinity();
  }
  throw makeError("{}: expected a number, got {}", what, value.dump().substr(0, 80));
}

std::vector<double> doublesFromJson(const nlohmann::json& value, std::string_view what) {
  if (!value.is_array()) throw makeError("{}: expected an array of numbers", what);
  std::vector<double> out;
  out.reserve(value.size());
  for (const auto& v : value) out.push_back(doubleFromJson(v, what));
  return out;
}

std::vector<std::int64_t> jsonIntegers(const nlohmann::json& value, std::string_view what, std::int64_t min, std::int64_t max) {
  if (!value.is_array()) throw makeError("{}: expected a list of integers", what);
  std::vector<std::int64_t> out;
  out.reserve(value.size());
  for (const auto& v : value) out.push_back(jsonInteger(v, what, min, max));
  return out;
}

std::string dumpJson(const nlohmann::json& value, int indent) { return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace); }

std::string validUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char b = p[i];
    const int len = b < 0x80 ? 1 : (b >= 0xC2 && b <= 0xDF) ? 2 : (b >= 0xE0 && b <= 0xEF) ? 3 : (b >= 0xF0 && b <= 0xF4) ? 4 : 0;
    bool ok = len > 0 && i + static_cast<std::size_t>(len) <= n;
    for (int k = 1; ok && k < len; ++k) ok = (p[i + static_cast<std::size_t>(k)] & 0xC0) == 0x80;
    if (ok && len == 3) ok = !(b == 0xE0 && p[i + 1] < 0xA0) && !(b == 0xED && p[i + 1] >= 0xA0);  // overlong; surrogates
    if (ok && len == 4) ok = !(b == 0xF0 && p[i + 1] < 0x90) && !(b == 0xF4 && p[i + 1] >= 0x90);  // overlong; past U+10FFFF
    if (ok) {
      out.append(text.substr(i, static_cast<std::size_t>(len)));
      i += static_cast<std::size_t>(len);
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD, one per bad byte
      ++i;
    }
  }
  return out;
}

}  // namespace cuset
