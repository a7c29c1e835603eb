#pragma once
// How a model's conversations become text, for training and for generation: the model's own chat
// template (tokenizer_config.json's chat_template, or chat_template.jinja), rendered as transformers
// renders it, or ChatML, the format of models without one (the tiny model this project trains from
// scratch). docs/chat-templates.md.
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace cuset {

struct ChatMessage;
class ChatTemplate;

class ChatFormat {
 public:
  static ChatFormat chatMl();
  // The chat template of a model or tokenizer folder with the folder's special tokens (bos_token,
  // eos_token, ...) as its variables; ChatML when the folder has no template. Throws cuset::Error
  // naming the file for a malformed tokenizer_config.json or a template this renderer cannot reproduce.
  static ChatFormat fromFolder(const std::filesystem::path& folder);

  // This format with the template read from `file` instead (the special tokens stay this format's).
  ChatFormat withTemplateFile(const std::filesystem::path& file) const;

  bool isChatMl() const { return !template_; }
  // "ChatML" or the template's file.
  std::string name() const;

  struct Rendered {
    std::string text;
    // Byte ranges of `text` the loss covers: each assistant turn with its end-of-turn token.
    std::vector<std::pair<std::size_t, std::size_t>> learn;
  };
  // The conversation as the template renders it (add_generation_prompt false). An assistant turn's
  // range starts where the conversation before it, rendered with add_generation_prompt, ends and stops
  // where the conversation through it ends (trailing whitespace excluded); a template for which
  // these are not prefixes of the whole text is an error naming the message (never a guessed span).
  Rendered renderConversation(const std::vector<ChatMessage>& messages) const;
  // The conversation followed by the template's generation prompt (add_generation_prompt true).
  std::string renderPrompt(const std::vector<ChatMessage>& messages) const;
  // Tokens that end a reply: the folder's eos_token (ChatML: none beyond <|im_end|>, which the
  // generator always stops at).
  std::vector<std::string> stopTokens() const;
  // The token batches are padded with: the folder's pad_token, else its eos_token, else <|im_end|>.
  std::string padToken() const;
  // Writes the template and its special tokens into `folder` (a checkpoint), so the folder renders as
  // this one does; nothing for ChatML.
  void save(const std::filesystem::path& folder) const;

 private:
  std::string render(const std::vector<ChatMessage>& messages, std::size_t count, bool generationPrompt) const;

  std::shared_ptr<const ChatTemplate> template_;  // null: ChatML
  nlohmann::ordered_json variables_;              // bos_token, eos_token, ... as strings
  nlohmann::json tokenizerConfig_;                // as read, written back by save()
  std::string jinjaFile_;                         // chat_template.jinja's text, when the template came from it
};

}  // namespace cuset
