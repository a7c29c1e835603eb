#include "cuset/common/text_excerpt.hpp"

#include <fmt/format.h>

namespace cuset {
namespace {

bool continuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::string excerpt(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  const std::string marker = fmt::format(" [... {} bytes left out ...] ", text.size());
  if (limit <= marker.size()) return marker.substr(0, limit);
  const std::size_t keep = limit - marker.size();
  std::size_t head = keep * 2 / 3, tail = text.size() - (keep - head);
  while (head > 0 && continuationByte(text[head])) --head;
  while (tail < text.size() && continuationByte(text[tail])) ++tail;
  std::string out(text.substr(0, head));
  out += fmt::format(" [... {} bytes left out ...] ", tail - head);
  out += text.substr(tail);
  return out;
}

std::string excerptLines(std::string_view text, std::size_t lineLimit, std::size_t limit) {
  std::string out;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    const bool last = end == std::string_view::npos;
    if (last) end = text.size();
    out += excerpt(text.substr(start, end - start), lineLimit);
    if (!last) out += '\n';
    start = end + 1;
  }
  return excerpt(out, limit);
}

}  // namespace cuset
