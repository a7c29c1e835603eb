#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string_view>

namespace cuset {

// Parses JSON text; a syntax error becomes cuset::Error naming `source` and the byte offset.
nlohmann::json parseJson(std::string_view text, std::string_view source);
nlohmann::json readJsonFile(const std::filesystem::path& path);
// Pretty-printed, atomically replaced (see writeFileAtomic).
void writeJsonFileAtomic(const std::filesystem::path& path, const nlohmann::json& value);

}  // namespace cuset
