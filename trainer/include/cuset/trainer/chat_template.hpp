#pragma once
// A model's own chat template: the Jinja `chat_template` of its tokenizer_config.json (or
// chat_template.jinja), rendered as transformers' apply_chat_template renders it (Jinja with
// trim_blocks and lstrip_blocks, transformers' tojson, raise_exception, strftime_now and namespace).
// The subset covers the templates of the families the trainer supports (Qwen2.5, Qwen3, DeepSeek-V3,
// DeepSeek-R1, Llama 3); a construct outside it is one error naming the construct and its line, at
// parse time where it can be seen there, never a silently different text. docs/chat-templates.md.
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace cuset {

class ChatTemplate {
 public:
  // Throws cuset::Error naming `origin`, the line and the construct ("line 4: the 'macro' statement is
  // not supported") for a template this renderer cannot reproduce exactly, or one that is malformed.
  static ChatTemplate parse(std::string_view source, const std::string& origin);

  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;
  ~ChatTemplate();

  // The template's variables are the members of `context` (messages, tools, add_generation_prompt,
  // bos_token, ...). Throws cuset::Error naming the origin and line for an error while rendering (the
  // template's own raise_exception, an undefined value's attribute, adding a string to a number).
  std::string render(const nlohmann::ordered_json& context) const;

  const std::string& origin() const;

  struct Impl;

 private:
  explicit ChatTemplate(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Python's json.dumps(value, ensure_ascii=False, indent=indent, separators=default, sort_keys=false),
// which transformers' tojson filter is: ", " and ": " between items (",", ": " with an indent), keys in
// insertion order, non-ASCII text as itself. `indent` < 0: none.
std::string pythonJsonDumps(const nlohmann::ordered_json& value, int indent = -1);

}  // namespace cuset
