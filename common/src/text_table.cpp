#include "cuset/common/text_table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cuset {

std::string TextTable::render() const {
  std::vector<std::size_t> widths(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      line += (i + 1 == widths.size()) ? cell : fmt::format("{:<{}}  ", cell, widths[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  emit(header_);
  std::vector<std::string> rule;
  for (auto w : widths) rule.emplace_back(w, '-');
  emit(rule);
  for (const auto& r : rows_) emit(r);
  return out;
}

std::string ellipsize(const std::string& text, std::size_t width) {
  std::string flat;
  for (char c : text) flat += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  if (flat.size() <= width) return flat;
  if (width <= 3) return flat.substr(0, width);
  return shortened(flat, width);
}

std::string shortened(const std::string& text, std::size_t bytes) {
  if (text.size() <= bytes) return text;
  std::size_t cut = bytes < 3 ? 0 : bytes - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // a continuation byte
  return text.substr(0, cut) + "...";
}

}  // namespace cuset
