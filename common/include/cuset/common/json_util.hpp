#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cuset {

// Parses JSON text; a syntax error becomes cuset::Error naming `source` and the byte offset.
nlohmann::json parseJson(std::string_view text, std::string_view source);
nlohmann::json readJsonFile(const std::filesystem::path& path);
// Calls `visit(line, "path:lineNo")` for every non-blank line of a JSONL file (a trailing CR dropped).
// Throws cuset::Error naming the file when it cannot be read; what a line means is the caller's.
void forEachJsonlLine(const std::filesystem::path& path, std::string_view what,
                      const std::function<void(const std::string& line, const std::string& where)>& visit);

// Pretty-printed, atomically replaced (see writeFileAtomic).
void writeJsonFileAtomic(const std::filesystem::path& path, const nlohmann::json& value);

// An integer field of a file we did not write: throws cuset::Error naming `what` unless `value` is an
// integer in [min, max]. A float is refused however whole it looks: converting an out-of-range one
// to an integer is undefined behaviour (found by fuzz_tokenizer_json).
std::int64_t jsonInteger(const nlohmann::json& value, std::string_view what, std::int64_t min = INT64_MIN, std::int64_t max = INT64_MAX);
// A JSON array of such integers (a shape, a pair of offsets).
std::vector<std::int64_t> jsonIntegers(const nlohmann::json& value, std::string_view what, std::int64_t min = INT64_MIN,
                                       std::int64_t max = INT64_MAX);

// A double as JSON, where JSON has no NaN or infinity: those are written as the strings "NaN",
// "Infinity" and "-Infinity" (Python's json names), finite values as numbers. nlohmann would write
// `null`, which no reader can tell from a missing value.
nlohmann::json jsonDouble(double value);
std::vector<nlohmann::json> jsonDoubles(const std::vector<double>& values);
// Reads back what jsonDouble wrote, and `null` (written by releases before it) as NaN; anything else
// is cuset::Error naming `what`.
double doubleFromJson(const nlohmann::json& value, std::string_view what);
std::vector<double> doublesFromJson(const nlohmann::json& value, std::string_view what);

// JSON text of `value` in which any invalid UTF-8 (a Latin-1 comment in a candidate, a stray byte in
// a log) is written as U+FFFD instead of throwing: every file the project writes goes through this.
std::string dumpJson(const nlohmann::json& value, int indent = -1);

// `text` with every invalid UTF-8 sequence replaced by U+FFFD (the text itself when it is valid).
std::string validUtf8(std::string_view text);

}  // namespace cuset
