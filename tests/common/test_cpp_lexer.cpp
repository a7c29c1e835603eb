// The project's one C/C++ tokenizer (common/cpp_lexer.hpp): where code is and is not.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuset/common/cpp_lexer.hpp"

namespace cuset {
namespace {

using Kind = CppToken::Kind;

// "kind:text" per token, for compact expectations.
std::vector<std::string> lexed(std::string_view s, bool directiveLines = true) {
  static constexpr const char* kNames[] = {"id", "num", "p", "lit", "com", "dir"};
  std::vector<std::string> out;
  for (const auto& t : lexCpp(s, directiveLines)) out.push_back(std::string(kNames[static_cast<int>(t.kind)]) + ":" + std::string(t.text(s)));
  return out;
}

TEST(CppLexer, CodeTokensWithLongestOperators) {
  EXPECT_EQ(lexed("k<<<g, b>>>(x->y, 1.5e-3f, .5, 0x1F, 1'000); a <<= ::b;"),
            (std::vector<std::string>{"id:k", "p:<<<", "id:g",        "p:,",   "id:b",   "p:>>>", "p:(",      "id:x", "p:->",
                                      "id:y", "p:,",   "num:1.5e-3f", "p:,",   "num:.5", "p:,",   "num:0x1F", "p:,",  "num:1'000",
                                      "p:)",  "p:;",   "id:a",        "p:<<=", "p:::",   "id:b",  "p:;"}));
}

TEST(CppLexer, CommentsAndLiteralsAreOneTokenEach) {
  EXPECT_EQ(lexed("a // x { \\\n still comment\nb /* } \n */ c \"{\\\"}\" '}' u8\"s\" L'c'"),
            (std::vector<std::string>{"id:a", "com:// x { \\\n still comment", "id:b", "com:/* } \n */", "id:c", "lit:\"{\\\"}\"", "lit:'}'",
                                      "lit:u8\"s\"", "lit:L'c'"}));
  // An unterminated literal ends with its line; an unterminated comment with the source.
  EXPECT_EQ(lexed("\"open\nx /* rest"), (std::vector<std::string>{"lit:\"open", "id:x", "com:/* rest"}));
}

TEST(CppLexer, RawStringsWithDelimitersAndPrefixes) {
  EXPECT_EQ(lexed("R\"x( )\" #include <a> )x\" y"), (std::vector<std::string>{"lit:R\"x( )\" #include <a> )x\"", "id:y"}));
  EXPECT_EQ(lexed("u8R\"(\n#define A\n)\";"), (std::vector<std::string>{"lit:u8R\"(\n#define A\n)\"", "p:;"}));
  // No raw string without its parenthesis: R is a name and what follows an ordinary string.
  EXPECT_EQ(lexed("R\"abc\" FR\"(x)\""), (std::vector<std::string>{"id:R", "lit:\"abc\"", "id:FR", "lit:\"(x)\""}));
}

TEST(CppLexer, DirectivesRunToTheirUnsplicedNewlineAndCarryTheirComments) {
  EXPECT_EQ(lexed("#define A \\\n  1\n  # include <x> /* a\n b */ y\nz # w"),
            (std::vector<std::string>{"dir:#define A \\\n  1", "dir:# include <x> /* a\n b */ y", "id:z", "p:#", "id:w"}));
  EXPECT_EQ(lexed("/* c */ #pragma once"), (std::vector<std::string>{"com:/* c */", "dir:#pragma once"}));
  EXPECT_EQ(lexed("#include /* c */ <x>", false), (std::vector<std::string>{"p:#", "id:include", "com:/* c */", "p:<", "id:x", "p:>"}));
}

TEST(CppLexer, SkippingFromAPositionSeesWhatTheLexerSees) {
  const std::string s = "x1'000 + 'a' + R\"(})\" // }\n u8\"}\"";
  EXPECT_EQ(skipCommentOrLiteral(s, 2), 2u);  // a digit separator, not a literal
  EXPECT_EQ(skipCommentOrLiteral(s, s.find("'a'")), s.find("'a'") + 3);
  EXPECT_EQ(skipCommentOrLiteral(s, s.find("R\"")), s.find(" //"));  // past the raw string
  EXPECT_EQ(skipCommentOrLiteral(s, s.find("//")), s.find('\n'));
  EXPECT_EQ(skipCommentOrLiteral(s, s.find("u8")), s.size());
  EXPECT_EQ(skipCommentOrLiteral(s, 0), 0u);
}

}  // namespace
}  // namespace cuset
