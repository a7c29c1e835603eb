#pragma once
// The one tokenizer of C, C++ and CUDA source in the project. Everything that reads candidate or training
// source as code builds on it: the include policy (candidate/source_policy.cpp), the KernelBench source
// splitter (translate/cuda_source_split.cpp), the simulator's host-build rewrites
// (compile/source_scan.hpp) and the trainer's sensitivity lexer. It knows what decides where code is
// and is not: comments (a `//` comment continued by a backslash-newline included), string and character
// literals with their prefixes (u8, u, U, L) and escapes, raw strings R"delim(...)delim", preprocessor
// lines with their continuations (a comment that starts on one carries it on), digit separators (1'000).
// It does not preprocess: trigraphs and line splices are the include policy's own first phases.
#include <cstddef>
#include <string_view>
#include <vector>

namespace cuset {

struct CppToken {
  enum class Kind {
    identifier,  // keywords included
    number,      // 42, 0x1F, 1.5e-3f, 1'000
    punct,       // operators and punctuation, longest match: <<<, >>>, ::, ->, <<=, ...
    literal,     // a string or character literal, raw or not, with its prefix
    comment,     // `//` to the end of its line, or /* ... */ (unterminated: to the end of the source)
    directive,   // a preprocessor line from its '#', continuations and comments included, without its newline
  };
  Kind kind = Kind::punct;
  std::size_t begin = 0, end = 0;  // [begin, end) in the source

  std::string_view text(std::string_view source) const { return source.substr(begin, end - begin); }
  bool code() const { return kind == Kind::identifier || kind == Kind::number || kind == Kind::punct; }
};

// Every token of `source` in order; whitespace and newlines separate them and are not tokens. An
// unterminated literal ends at its line's end, an unterminated raw string or block comment at the
// source's end. With `directiveLines` false, '#' is punctuation and a preprocessor line is lexed like
// any other (the include policy reads directives from the text it has cleaned of comments).
std::vector<CppToken> lexCpp(std::string_view source, bool directiveLines = true);

// If a comment or a literal starts at `i`, the index just past it; otherwise `i`. For scans that walk
// the text themselves (brace depth at a position): they see the same comments and literals as lexCpp.
std::size_t skipCommentOrLiteral(std::string_view source, std::size_t i);

bool isCppIdentifierChar(char c);

}  // namespace cuset
