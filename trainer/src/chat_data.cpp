#include "cuset/trainer/chat_data.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cuset/common/error.hpp"
#include "cuset/common/json_util.hpp"
#include "cuset/common/thread_pool.hpp"

namespace cuset {

std::vector<ChatExample> readChatJsonl(const std::filesystem::path& path) {
  std::vector<ChatExample> out;
  forEachJsonlLine(path, "training data", [&](const std::string& line, const std::string& where) {
    nlohmann::json r;
    try {
      r = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw makeError("{}: malformed JSON: {}", where, e.what());
    }
    ChatExample ex;
    try {
      if (r.contains("messages")) {
        for (const auto& m : r.at("messages")) {
          ChatMessage msg{m.at("role").get<std::string>(), m.at("content").get<std::string>()};
          if (msg.role != "system" && msg.role != "user" && msg.role != "assistant") {
            throw makeError("role '{}' (expected system, user or assistant)", msg.role);
          }
          ex.messages.push_back(std::move(msg));
        }
      } else if (r.contains("instruction") && r.contains("response")) {
        if (r.contains("system")) ex.messages.push_back({"system", r.at("system").get<std::string>()});
        ex.messages.push_back({"user", r.at("instruction").get<std::string>()});
        ex.messages.push_back({"assistant", r.at("response").get<std::string>()});
      } else {
        throw Error("needs \"instruction\" and \"response\", or \"messages\"");
      }
    } catch (const nlohmann::json::exception& e) {
      throw makeError("{}: {}", where, e.what());
    } catch (const Error& e) {
      throw makeError("{}: {}", where, e.what());
    }
    const bool hasAssistant = std::any_of(ex.messages.begin(), ex.messages.end(), [](auto& m) { return m.role == "assistant"; });
    if (!hasAssistant) throw makeError("{}: no assistant message, so nothing to learn from", where);
    out.push_back(std::move(ex));
  });
  if (out.empty()) throw makeError("{}: no training examples", path.string());
  return out;
}

TokenizedExample tokenizeChat(const BpeTokenizer& tokenizer, const ChatFormat& format, const ChatExample& example, std::size_t maxTokens) {
  TokenizedExample t;
  ChatFormat::Rendered rendered = format.renderConversation(example.messages);
  t.text = std::move(rendered.text);
  Encoding e = tokenizer.encode(t.text);
  t.ids = std::move(e.ids);
  t.spans = std::move(e.spans);
  t.lossMask.resize(t.ids.size());
  const auto& learn = rendered.learn;
  for (std::size_t i = 0; i < t.ids.size(); ++i) {
    const std::size_t begin = t.spans[i].first;
    t.lossMask[i] = std::any_of(learn.begin(), learn.end(), [&](auto& r) { return begin >= r.first && begin < r.second; }) ? 1 : 0;
  }
  if (t.ids.size() > maxTokens) {
    t.ids.resize(maxTokens);
    t.lossMask.resize(maxTokens);
    t.spans.resize(maxTokens);
  }
  return t;
}

std::vector<TokenizedExample> tokenizeChat(const BpeTokenizer& tokenizer, const ChatFormat& format, const std::vector<ChatExample>& examples,
                                           std::size_t maxTokens, std::size_t threads) {
  std::vector<TokenizedExample> out(examples.size());
  parallelChunks(examples.size(), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) out[i] = tokenizeChat(tokenizer, format, examples[i], maxTokens);
  });
  return out;
}

}  // namespace cuset
