#include "cuset/trainer/chat_format.hpp"

#include <fmt/format.h>

#include "cuset/common/error.hpp"
#include "cuset/common/file_util.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/trainer/chat_data.hpp"
#include "cuset/trainer/chat_template.hpp"

namespace cuset {
namespace fs = std::filesystem;

namespace {

constexpr const char* kSpecialTokenNames[] = {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"};

// A special token in tokenizer_config.json: a string, or an AddedToken object with "content".
std::optional<std::string> specialToken(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value.at("content").is_string()) return value.at("content").get<std::string>();
  return std::nullopt;
}

// tokenizer_config.json's chat_template: a string, or a list of {name, template} of which transformers
// uses the one named "default".
std::optional<std::string> configTemplate(const nlohmann::json& config, const fs::path& file) {
  if (!config.contains("chat_template") || config.at("chat_template").is_null()) return std::nullopt;
  const auto& t = config.at("chat_template");
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array()) {
    for (const auto& entry : t) {
      if (entry.is_object() && entry.value("name", "") == "default" && entry.contains("template")) return entry.at("template").get<std::string>();
    }
    throw makeError("{}: chat_template is a list of templates without one named 'default'", file.string());
  }
  throw makeError("{}: chat_template is neither a string nor a list of named templates", file.string());
}

nlohmann::ordered_json messagesJson(const std::vector<ChatMessage>& messages, std::size_t count) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < count; ++i) out.push_back({{"role", messages[i].role}, {"content", messages[i].content}});
  return out;
}

bool startsWith(const std::string& text, const std::string& prefix) { return text.compare(0, prefix.size(), prefix) == 0; }

}  // namespace

ChatFormat ChatFormat::chatMl() { return ChatFormat(); }

ChatFormat ChatFormat::fromFolder(const fs::path& folder) {
  ChatFormat format;
  const fs::path configFile = folder / "tokenizer_config.json";
  const fs::path jinjaFile = folder / "chat_template.jinja";
  std::optional<std::string> source;
  std::string origin;
  if (fs::exists(configFile)) {
    format.tokenizerConfig_ = readJsonFile(configFile);
    if (!format.tokenizerConfig_.is_object()) throw makeError("{}: not a JSON object", configFile.string());
    for (const char* name : kSpecialTokenNames) {
      if (format.tokenizerConfig_.contains(name)) {
        if (auto token = specialToken(format.tokenizerConfig_.at(name))) format.variables_[name] = *token;
      }
    }
    source = configTemplate(format.tokenizerConfig_, configFile);
    origin = configFile.string() + " chat_template";
  }
  if (fs::exists(jinjaFile)) {  // transformers prefers the separate file when both are there
    format.jinjaFile_ = readFile(jinjaFile);
    source = format.jinjaFile_;
    origin = jinjaFile.string();
  }
  if (!source) return ChatFormat::chatMl();
  format.template_ = std::make_shared<const ChatTemplate>(ChatTemplate::parse(*source, origin));
  return format;
}

ChatFormat ChatFormat::withTemplateFile(const fs::path& file) const {
  ChatFormat format = *this;
  format.jinjaFile_ = readFile(file);
  format.template_ = std::make_shared<const ChatTemplate>(ChatTemplate::parse(format.jinjaFile_, file.string()));
  return format;
}

std::string ChatFormat::name() const { return template_ ? template_->origin() : "ChatML"; }

std::string ChatFormat::render(const std::vector<ChatMessage>& messages, std::size_t count, bool generationPrompt) const {
  if (!template_) {
    std::string text;
    for (std::size_t i = 0; i < count; ++i) text += "<|im_start|>" + messages[i].role + "\n" + messages[i].content + "<|im_end|>\n";
    return generationPrompt ? text + "<|im_start|>assistant\n" : text;
  }
  nlohmann::ordered_json context = variables_;
  context["messages"] = messagesJson(messages, count);
  context["tools"] = nullptr;  // as apply_chat_template passes them: defined, none
  context["documents"] = nullptr;
  context["add_generation_prompt"] = generationPrompt;
  return template_->render(context);
}

ChatFormat::Rendered ChatFormat::renderConversation(const std::vector<ChatMessage>& messages) const {
  Rendered out;
  out.text = render(messages, messages.size(), false);
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].role != "assistant") continue;
    const std::string before = render(messages, i, true);
    const std::string through = render(messages, i + 1, false);
    if (!startsWith(out.text, before) || !startsWith(out.text, through) || through.size() < before.size()) {
      throw makeError(
          "{}: the conversation before message {}, rendered with the generation prompt, is not a prefix of the whole "
          "conversation (the template renders a turn differently once later turns follow, as Qwen3's and DeepSeek-R1's do "
          "with reasoning, or opens replies with text the rendered turn lacks), so the span of assistant message {} to learn "
          "from cannot be found",
          name(), i + 1, i + 1);
    }
    std::size_t end = through.size();
    while (end > before.size() && (through[end - 1] == '\n' || through[end - 1] == ' ' || through[end - 1] == '\t' || through[end - 1] == '\r'))
      --end;
    out.learn.emplace_back(before.size(), end);
  }
  return out;
}

std::string ChatFormat::renderPrompt(const std::vector<ChatMessage>& messages) const { return render(messages, messages.size(), true); }

std::vector<std::string> ChatFormat::stopTokens() const {
  std::vector<std::string> out;
  if (variables_.contains("eos_token")) out.push_back(variables_.at("eos_token").get<std::string>());
  return out;
}

std::string ChatFormat::padToken() const {
  for (const char* name : {"pad_token", "eos_token"}) {
    if (variables_.contains(name)) return variables_.at(name).get<std::string>();
  }
  return "<|im_end|>";
}

void ChatFormat::save(const fs::path& folder) const {
  if (!template_) return;
  if (!tokenizerConfig_.is_null()) writeJsonFileAtomic(folder / "tokenizer_config.json", tokenizerConfig_);
  if (!jinjaFile_.empty()) writeFileAtomic(folder / "chat_template.jinja", jinjaFile_);
}

}  // namespace cuset
