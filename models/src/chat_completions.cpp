#include "cuset/models/chat_completions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

namespace cuset {

using nlohmann::json;

std::string chatRequestBody(const std::vector<ChatMessage>& messages, const ChatParameters& p, int n, std::optional<std::uint64_t> seed) {
  json m = json::array();
  for (const auto& message : messages) m.push_back({{"role", message.role}, {"content", message.content}});
  json body = {{"model", p.model}, {"messages", std::move(m)}, {"temperature", p.temperature}, {"top_p", p.topP}, {"max_tokens", p.maxTokens},
               {"n", n},           {"stream", false}};
  if (seed) body["seed"] = *seed;
  if (!p.stop.empty()) body["stop"] = p.stop;
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

Expected<ChatAnswer> parseChatAnswer(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception&) {
    return Unexpected(
        fmt::format("the endpoint answered 200 with a body that is not JSON ({} bytes, starting {:?})", body.size(), body.substr(0, 60)));
  }
  if (!j.is_object()) return Unexpected("the endpoint answered 200 with JSON that is not an object");
  if (j.contains("error") && !j["error"].is_null()) {
    return Unexpected(fmt::format("the endpoint answered 200 with an error: {}", serverErrorMessage(body)));
  }
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty()) return Unexpected("the endpoint's answer has no choices");
  ChatAnswer answer;
  std::vector<std::pair<std::int64_t, ChatChoice>> indexed;
  for (std::size_t i = 0; i < choices->size(); ++i) {
    const json& c = (*choices)[i];
    if (!c.is_object()) return Unexpected(fmt::format("the endpoint's choice {} is not an object", i));
    ChatChoice choice;
    if (const auto message = c.find("message"); message != c.end() && message->is_object()) {
      if (const auto content = message->find("content"); content != message->end() && content->is_string())
        choice.content = content->get<std::string>();
    } else if (const auto text = c.find("text"); text != c.end() && text->is_string()) {
      choice.content = text->get<std::string>();  // completions-style servers
    }
    if (const auto reason = c.find("finish_reason"); reason != c.end() && reason->is_string()) choice.finishReason = reason->get<std::string>();
    const std::int64_t index = c.contains("index") && c["index"].is_number_integer() ? c["index"].get<std::int64_t>() : static_cast<std::int64_t>(i);
    indexed.emplace_back(index, std::move(choice));
  }
  std::stable_sort(indexed.begin(), indexed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [index, choice] : indexed) answer.choices.push_back(std::move(choice));
  if (const auto usage = j.find("usage"); usage != j.end() && usage->is_object()) {
    const auto count = [&](const char* key) -> std::optional<std::int64_t> {
      const auto it = usage->find(key);
      if (it == usage->end() || !it->is_number_integer()) return std::nullopt;
      return it->get<std::int64_t>();
    };
    const auto prompt = count("prompt_tokens");
    const auto completion = count("completion_tokens");
    if (prompt && completion) answer.usage = ChatUsage{*prompt, *completion};
  }
  return answer;
}

std::string serverErrorMessage(const std::string& body) {
  try {
    const json j = json::parse(body);
    if (j.is_object()) {
      if (j.contains("error")) {
        const json& e = j["error"];
        if (e.is_string()) return e.get<std::string>();
        if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
      }
      for (const char* key : {"message", "detail"}) {
        if (j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
      }
    }
  } catch (const json::exception&) {
  }
  std::string start = body.substr(0, 200);
  std::replace(start.begin(), start.end(), '\n', ' ');
  return start.empty() ? "(empty body)" : start;
}

ExchangeOutcome classifyExchange(const HttpResponse& r) {
  if (r.bodyCut) return ExchangeOutcome::cut;
  if (r.status == 0) return ExchangeOutcome::retry;  // connection refused or reset, DNS, timeout
  if (r.status >= 200 && r.status < 300) return ExchangeOutcome::answer;
  if (r.status == 401 || r.status == 403 || r.status == 404) return ExchangeOutcome::fatal;
  if (r.status == 408 || r.status == 409 || r.status == 429 || r.status >= 500) return ExchangeOutcome::retry;
  return ExchangeOutcome::refused;
}

std::chrono::duration<double> RetryPolicy::delay(int attempt, std::optional<double> retryAfterSeconds, std::mt19937_64& rng) const {
  if (retryAfterSeconds) return std::chrono::duration<double>(std::min(*retryAfterSeconds, cap.count()));
  const double ceiling = std::min(cap.count(), base.count() * std::ldexp(1.0, std::min(attempt, 30)));
  return std::chrono::duration<double>(std::uniform_real_distribution<double>(0.0, ceiling)(rng));
}

}  // namespace cuset
