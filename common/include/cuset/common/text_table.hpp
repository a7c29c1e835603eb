#pragma once
// Plain-text tables for terminal output: columns padded to their widest cell.
#include <string>
#include <vector>

namespace cuset {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void addRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Shortens `text` to at most `width` characters (on one line), marking the cut with "...".
std::string ellipsize(const std::string& text, std::size_t width);

// `text` cut to at most `bytes` bytes with "..." appended when it was longer, never inside a UTF-8
// sequence (g++ quotes names with U+2018/U+2019: a cut through one is not text).
std::string shortened(const std::string& text, std::size_t bytes);

}  // namespace cuset
