#pragma once
// Instruction-tuning data: JSONL records, and tokenisation through a chat format with a loss mask that
// covers only the assistant's responses.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cuset/trainer/chat_format.hpp"
#include "cuset/trainer/tokenizer.hpp"

namespace cuset {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

struct ChatExample {
  std::vector<ChatMessage> messages;
};

// Reads `{"instruction": ..., "response": ...}` (optionally "system") or `{"messages": [{"role",
// "content"}, ...]}` lines. Throws cuset::Error naming file:line for a malformed record; blank lines
// are skipped.
std::vector<ChatExample> readChatJsonl(const std::filesystem::path& path);

struct TokenizedExample {
  std::vector<std::int32_t> ids;
  std::vector<std::uint8_t> lossMask;                      // 1 where the token is part of an assistant response
  std::string text;                                        // the rendered conversation
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // byte span of each token in `text`
  std::vector<std::uint8_t> sensitive;                     // 1 where the token overlaps CUDA-sensitive code (filled on demand)
};

// The conversation rendered by `format` (the model's chat template, or ChatML) and encoded at once (as
// it would be at generation time); a token is in the loss when its span starts inside an assistant
// turn's range (its content and end-of-turn token: ChatFormat::renderConversation). Truncated to
// `maxTokens`.
TokenizedExample tokenizeChat(const BpeTokenizer& tokenizer, const ChatFormat& format, const ChatExample& example, std::size_t maxTokens);
// The same for a whole dataset on `threads` threads (0: one per core), in order.
std::vector<TokenizedExample> tokenizeChat(const BpeTokenizer& tokenizer, const ChatFormat& format, const std::vector<ChatExample>& examples,
                                           std::size_t maxTokens, std::size_t threads);

}  // namespace cuset
