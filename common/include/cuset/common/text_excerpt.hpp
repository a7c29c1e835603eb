#pragma once
// Bounded text for what a person reads (a verdict's reason, a compile log): a candidate's own text is
// quoted in excerpts, never whole, so a hostile or degenerate source (a 200,000-deep expression the
// compiler echoes back) cannot make a results file or a report unreadable.
#include <cstddef>
#include <string>
#include <string_view>

namespace cuset {

// `text` itself when it has at most `limit` bytes; otherwise its beginning and end around
// " [... N bytes left out ...] ", at most `limit` bytes in all, cut between UTF-8 characters.
std::string excerpt(std::string_view text, std::size_t limit);

// Every line of `text` excerpted to `lineLimit` bytes, then the whole to `limit`.
std::string excerptLines(std::string_view text, std::size_t lineLimit, std::size_t limit);

}  // namespace cuset
