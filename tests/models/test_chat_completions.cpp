// The chat-completions protocol pieces: request bodies, answer parsing, failure classes, backoff.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cuset/models/chat_completions.hpp"
#include "cuset/models/endpoint_generation.hpp"

using nlohmann::json;

namespace cuset {
namespace {

TEST(ChatCompletions, RequestBodyCarriesEveryParameter) {
  ChatParameters p{.model = "m", .temperature = 0.5, .topP = 0.9, .maxTokens = 77, .seed = std::nullopt, .stop = {"```\n\n"}};
  const json body = json::parse(chatRequestBody({{"system", "s"}, {"user", "u"}}, p, 4, 12));
  EXPECT_EQ(body["model"], "m");
  EXPECT_EQ(body["messages"], json::parse(R"([{"role":"system","content":"s"},{"role":"user","content":"u"}])"));
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(body["top_p"].get<double>(), 0.9);
  EXPECT_EQ(body["max_tokens"], 77);
  EXPECT_EQ(body["n"], 4);
  EXPECT_EQ(body["seed"], 12);
  EXPECT_EQ(body["stop"], json::array({"```\n\n"}));
  EXPECT_FALSE(json::parse(chatRequestBody({}, p, 1, std::nullopt)).contains("seed"));
}

TEST(ChatCompletions, AnswersAreParsedInIndexOrder) {
  const auto a = parseChatAnswer(R"({"choices":[{"index":1,"message":{"content":"b"},"finish_reason":"length"},
                                                {"index":0,"message":{"content":"a"},"finish_reason":"stop"}],
                                     "usage":{"prompt_tokens":10,"completion_tokens":20}})");
  ASSERT_TRUE(a) << a.error();
  ASSERT_EQ(a->choices.size(), 2u);
  EXPECT_EQ(a->choices[0].content, "a");
  EXPECT_EQ(a->choices[1].finishReason, "length");
  ASSERT_TRUE(a->usage);
  EXPECT_EQ(a->usage->completionTokens, 20);
  const auto noUsage = parseChatAnswer(R"({"choices":[{"message":{"content":null}}]})");
  ASSERT_TRUE(noUsage);
  EXPECT_FALSE(noUsage->usage);
  EXPECT_EQ(noUsage->choices[0].content, "");
}

TEST(ChatCompletions, MalformedAnswersSayWhatIsWrong) {
  EXPECT_NE(parseChatAnswer("{\"choices\": [").error().find("not JSON"), std::string::npos);
  EXPECT_NE(parseChatAnswer("[]").error().find("not an object"), std::string::npos);
  EXPECT_NE(parseChatAnswer(R"({"choices": []})").error().find("no choices"), std::string::npos);
  EXPECT_NE(parseChatAnswer(R"({"error": {"message": "overloaded"}})").error().find("overloaded"), std::string::npos);
  EXPECT_NE(parseChatAnswer(R"({"choices": [3]})").error().find("choice 0"), std::string::npos);
}

TEST(ChatCompletions, ServerErrorMessagesInTheirUsualShapes) {
  EXPECT_EQ(serverErrorMessage(R"({"error": {"message": "bad key"}})"), "bad key");
  EXPECT_EQ(serverErrorMessage(R"({"error": "rate limited"})"), "rate limited");
  EXPECT_EQ(serverErrorMessage(R"({"detail": "Not Found"})"), "Not Found");
  EXPECT_EQ(serverErrorMessage("<html>\nBad Gateway</html>"), "<html> Bad Gateway</html>");
  EXPECT_EQ(serverErrorMessage(""), "(empty body)");
}

TEST(ChatCompletions, ExchangesAreClassified) {
  auto status = [](long s) {
    HttpResponse r;
    r.status = s;
    return classifyExchange(r);
  };
  EXPECT_EQ(status(200), ExchangeOutcome::answer);
  EXPECT_EQ(status(0), ExchangeOutcome::retry);
  for (long s : {408L, 409L, 429L, 500L, 502L, 503L, 504L}) EXPECT_EQ(status(s), ExchangeOutcome::retry) << s;
  for (long s : {401L, 403L, 404L}) EXPECT_EQ(status(s), ExchangeOutcome::fatal) << s;
  for (long s : {400L, 413L, 422L}) EXPECT_EQ(status(s), ExchangeOutcome::refused) << s;
  HttpResponse cut;
  cut.status = 200;
  cut.bodyCut = true;
  EXPECT_EQ(classifyExchange(cut), ExchangeOutcome::cut);
}

TEST(ChatCompletions, BackoffIsJitteredExponentialAndHonoursRetryAfter) {
  RetryPolicy policy{.maxRetries = 8, .base = std::chrono::duration<double>(1.0), .cap = std::chrono::duration<double>(60.0)};
  std::mt19937_64 rng(1);
  for (int attempt = 0; attempt < 10; ++attempt) {
    double most = 0;
    for (int i = 0; i < 200; ++i) {
      const double d = policy.delay(attempt, std::nullopt, rng).count();
      EXPECT_GE(d, 0.0);
      EXPECT_LE(d, std::min(60.0, std::ldexp(1.0, attempt)));
      most = std::max(most, d);
    }
    EXPECT_GT(most, 0.5 * std::min(60.0, std::ldexp(1.0, attempt)));  // the whole range is used
  }
  EXPECT_DOUBLE_EQ(policy.delay(0, 7.0, rng).count(), 7.0);
  EXPECT_DOUBLE_EQ(policy.delay(0, 3600.0, rng).count(), 60.0);
}

TEST(ChatCompletions, RetryAfterAsSecondsOrAnHttpDate) {
  const auto now = std::chrono::system_clock::from_time_t(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT
  EXPECT_EQ(parseRetryAfter("120", now), 120.0);
  EXPECT_EQ(parseRetryAfter(" 0.5 ", now), 0.5);
  EXPECT_EQ(parseRetryAfter("Sun, 06 Nov 1994 08:50:07 GMT", now), 30.0);
  EXPECT_EQ(parseRetryAfter("Sun, 06 Nov 1994 08:00:00 GMT", now), 0.0);
  EXPECT_FALSE(parseRetryAfter("soon", now));
  EXPECT_FALSE(parseRetryAfter("-3", now));
}

TEST(ChatCompletions, RequestKeysChangeWithEveryInputAndOnlyThen) {
  const std::vector<ChatMessage> m = {{"user", "write relu"}};
  const ChatParameters p{.model = "m"};
  const std::string key = sampleRequestKey(m, p, 0);
  EXPECT_EQ(key, sampleRequestKey(m, p, 0));
  EXPECT_NE(key, sampleRequestKey(m, p, 1));
  EXPECT_NE(key, sampleRequestKey({{"user", "write gelu"}}, p, 0));
  EXPECT_NE(key, sampleRequestKey({{"system", "write relu"}}, p, 0));
  auto changed = [&](auto edit) {
    ChatParameters q = p;
    edit(q);
    return sampleRequestKey(m, q, 0) != key;
  };
  EXPECT_TRUE(changed([](ChatParameters& q) { q.model = "m2"; }));
  EXPECT_TRUE(changed([](ChatParameters& q) { q.temperature = 0.7; }));
  EXPECT_TRUE(changed([](ChatParameters& q) { q.topP = 0.5; }));
  EXPECT_TRUE(changed([](ChatParameters& q) { q.maxTokens = 10; }));
  EXPECT_TRUE(changed([](ChatParameters& q) { q.seed = 0; }));
  EXPECT_TRUE(changed([](ChatParameters& q) { q.stop = {"x"}; }));
}

}  // namespace
}  // namespace cuset
