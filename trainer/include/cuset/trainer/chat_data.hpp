#pragma once
// Instruction-tuning data: JSONL records, a chat template, and tokenisation with a loss mask that
// covers only the assistant's responses.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

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

// ChatML: "<|im_start|>{role}\n{content}<|im_end|>\n" per message. The whole text is encoded at once
// (as it would be at generation time) and a token is in the loss when its span starts inside an
// assistant message's content or its closing <|im_end|>. Truncated to `maxTokens`.
TokenizedExample tokenizeChatMl(const BpeTokenizer& tokenizer, const ChatExample& example, std::size_t maxTokens);
// The same for a whole dataset on `threads` threads (0: one per core), in order.
std::vector<TokenizedExample> tokenizeChatMl(const BpeTokenizer& tokenizer, const std::vector<ChatExample>& examples, std::size_t maxTokens,
                                             std::size_t threads);

// The prompt for generation: the messages, then "<|im_start|>assistant\n".
std::string renderChatMlPrompt(const std::vector<ChatMessage>& messages);

}  // namespace cuset
