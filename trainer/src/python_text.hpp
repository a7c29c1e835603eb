#pragma once
// Python's text of JSON values for the chat-template renderer (chat_template.cpp): what {{ x }} prints
// (str(): None, True, [1, 'a'], {'k': 'v'}), and the str methods strip and split. Private to
// cuset_trainer; json.dumps is cuset::pythonJsonDumps (chat_template.hpp).
#include <cstdint>
#include <optional>
#include <string>

#include "jinja_ast.hpp"

namespace cuset::jinja {

std::string pythonStr(const Json& j);
bool isWhitespace(unsigned char c);
// str.strip / lstrip / rstrip: `chars` null strips whitespace.
std::string strip(const std::string& s, const std::string* chars, bool left, bool right);
// str.split(separator, maxSplit): no separator splits at whitespace runs; maxSplit < 0: no limit.
Json splitString(const std::string& s, const std::optional<std::string>& separator, std::int64_t maxSplit);

}  // namespace cuset::jinja
