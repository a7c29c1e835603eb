// `cuset generate --endpoint` against the scripted local server: counts, n, retries, faults,
// resume, the API key, HTTPS.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cstdint>
#include <sstream>

#include "cuset/evaluator/candidate/candidate.hpp"
#include "cuset/models/endpoint_generation.hpp"
#include "openai_test_server.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuset {
namespace {

constexpr const char* kProblems[] = {"level1/relu", "level1/elu", "level1/row_max"};

// Three bundled problems in a suite of their own.
fs::path smallSuite(const test::TempDir& dir) {
  for (const char* id : kProblems) {
    fs::create_directories(dir / "suite" / id);
    fs::copy(fs::path(CUSET_PROBLEMS_DIR) / id, dir / "suite" / id, fs::copy_options::recursive);
  }
  return dir / "suite";
}

json script(json extra = json::object()) {
  json s = {{"models",
             {{"coder",
               {{"rules", json::array({{{"contains", {"ReLU"}}, {"content", "```cuda\n// relu\n```"}}})},
                {"default", {{"content", "```cuda\n// other\n```"}, {"finish_reason", "stop"}}}}}}}};
  s.update(extra);
  return s;
}

EndpointGenerateOptions options(const test::OpenAiTestServer& server, const test::TempDir& dir, int k) {
  EndpointGenerateOptions o;
  o.endpoint.baseUrl = server.url();
  o.endpoint.concurrency = 4;
  o.endpoint.retry.base = std::chrono::duration<double>(0.01);
  o.parameters.model = "coder";
  o.parameters.maxTokens = 256;
  o.problemsDir = fs::exists(dir / "suite") ? dir / "suite" : smallSuite(dir);
  o.outFile = dir / "candidates.jsonl";
  o.samples = k;
  o.showProgress = false;
  return o;
}

std::vector<json> records(const fs::path& file) {
  std::vector<json> out;
  std::istringstream in(test::readText(file));
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

TEST(EndpointGeneration, OneRequestPerProblemWhenTheServerHonoursN) {
  test::TempDir dir;
  test::OpenAiTestServer server(script());
  const auto s = runEndpointGeneration(options(server, dir, 3));
  EXPECT_EQ(s.samples, 9u);
  EXPECT_EQ(s.requests, 3u);
  EXPECT_FALSE(s.nIgnored);
  EXPECT_EQ(server.chatRequests(), 3u);
  const auto rs = records(dir / "candidates.jsonl");
  ASSERT_EQ(rs.size(), 9u);
  std::map<std::string, std::set<std::int64_t>> samples;
  for (const auto& r : rs) {
    samples[r["problem"]].insert(r["sample"].get<std::int64_t>());
    EXPECT_EQ(r["model"], "coder");
    EXPECT_EQ(r["served_model"], "coder");
    EXPECT_EQ(r["finish_reason"], "stop");
    EXPECT_EQ(r["request"]["n"], 3);
    EXPECT_EQ(r["request"]["max_tokens"], 256);
    EXPECT_EQ(r["usage"]["shared_by"], 3);
    EXPECT_GT(r["latency_s"].get<double>(), 0.0);
    EXPECT_EQ(r["response"], r["problem"] == "level1/relu" ? "```cuda\n// relu\n```" : "```cuda\n// other\n```");
  }
  for (const char* id : kProblems) EXPECT_EQ(samples[id], (std::set<std::int64_t>{0, 1, 2})) << id;
  // Token shares add up to what the server reported per request.
  std::int64_t completion = 0;
  for (const auto& r : rs) completion += r["usage"]["completion_tokens"].get<std::int64_t>();
  EXPECT_EQ(completion, s.completionTokens);
  // The same prompt and parameters for every sample of a problem; the bodies say n = 3.
  for (const auto& r : server.requests()) EXPECT_EQ(r["body"]["n"], 3);
}

TEST(EndpointGeneration, OneRequestPerSampleWhenTheServerIgnoresN) {
  test::TempDir dir;
  test::OpenAiTestServer server(script({{"honour_n", false}}));
  auto o = options(server, dir, 3);
  o.parameters.seed = 100;
  const auto s = runEndpointGeneration(o);
  EXPECT_TRUE(s.nIgnored);
  EXPECT_EQ(s.samples, 9u);
  EXPECT_EQ(records(dir / "candidates.jsonl").size(), 9u);
  // Each problem's first request asked n = 3 and got one; the rest asked one each.
  EXPECT_EQ(server.chatRequests(), 9u);
  std::set<std::uint64_t> seeds;
  for (const auto& r : records(dir / "candidates.jsonl")) {
    if (r["problem"] == "level1/elu") seeds.insert(r["request"]["seed"].get<std::uint64_t>());
  }
  EXPECT_EQ(seeds, (std::set<std::uint64_t>{100, 101, 102}));  // seeded servers do not return k copies
}

TEST(EndpointGeneration, RetriesRateLimitsServerErrorsAndTimeouts) {
  test::TempDir dir;
  test::OpenAiTestServer server(script({{"faults", json::array({{{"fault", "429"}, {"retry_after", "0.05"}},
                                                                {{"fault", "500"}},
                                                                {{"fault", "503"}},
                                                                {{"fault", "timeout"}, {"seconds", 4}},
                                                                {{"fault", "close"}}})}}));
  auto o = options(server, dir, 1);
  o.endpoint.concurrency = 1;
  o.endpoint.requestTimeout = std::chrono::milliseconds(2000);  // well above a loaded machine's answer time
  const auto s = runEndpointGeneration(o);
  EXPECT_EQ(s.retries, 5u);
  EXPECT_EQ(s.requests, 8u);
  EXPECT_EQ(s.failed, 0u);
  const auto rs = records(dir / "candidates.jsonl");
  ASSERT_EQ(rs.size(), 3u);
  EXPECT_EQ(rs[0]["attempts"], 6);  // the first problem took all five faults
  for (const auto& r : rs) EXPECT_FALSE(r.contains("error"));
}

TEST(EndpointGeneration, MalformedAnswersBecomeCandidatesThatFailWithTheReason) {
  test::TempDir dir;
  test::OpenAiTestServer server(script({{"faults", json::array({{{"fault", "malformed"}},
                                                                {{"fault", "cut"}},
                                                                {{"fault", "no_choices"}},
                                                                {{"fault", "empty"}},
                                                                {{"fault", "400"}, {"message", "prompt is too long"}}})}}));
  auto o = options(server, dir, 2);
  o.endpoint.concurrency = 1;
  o.useN = false;
  const auto s = runEndpointGeneration(o);
  EXPECT_EQ(s.samples, 6u);
  EXPECT_EQ(s.failed, 5u);
  EXPECT_EQ(s.retries, 0u);
  const auto candidates = readCandidates(dir / "candidates.jsonl", "m");
  ASSERT_EQ(candidates.size(), 6u);
  std::vector<std::string> reasons;
  for (const auto& c : candidates) {
    if (!c.readError.empty()) reasons.push_back(c.readError);
  }
  ASSERT_EQ(reasons.size(), 6u);  // the sixth answered, with a block that is no kernel: the evaluator's own extraction says so
  EXPECT_NE(reasons[0].find("not JSON"), std::string::npos) << reasons[0];
  EXPECT_NE(reasons[1].find("cut off"), std::string::npos) << reasons[1];
  EXPECT_NE(reasons[2].find("no choices"), std::string::npos) << reasons[2];
  EXPECT_NE(reasons[3].find("empty message"), std::string::npos) << reasons[3];
  EXPECT_NE(reasons[4].find("HTTP 400: prompt is too long"), std::string::npos) << reasons[4];
  EXPECT_NE(reasons[5].find("code block"), std::string::npos) << reasons[5];
  EXPECT_EQ(reasons[5].find("no usable response"), std::string::npos) << reasons[5];
}

TEST(EndpointGeneration, MissingUsageIsCountedNotInvented) {
  test::TempDir dir;
  test::OpenAiTestServer server(script({{"usage", false}}));
  const auto s = runEndpointGeneration(options(server, dir, 2));
  EXPECT_EQ(s.usageMissing, 6u);
  EXPECT_EQ(s.completionTokens, 0);
  for (const auto& r : records(dir / "candidates.jsonl")) EXPECT_TRUE(r["usage"].is_null());
}

TEST(EndpointGeneration, ResumeSendsNothingForFinishedSamples) {
  test::TempDir dir;
  test::OpenAiTestServer server(script());
  auto o = options(server, dir, 2);
  runEndpointGeneration(o);
  const std::string before = test::readText(dir / "candidates.jsonl");
  const std::size_t sent = server.chatRequests();
  o.resume = true;
  const auto s = runEndpointGeneration(o);
  EXPECT_EQ(s.reused, 6u);
  EXPECT_EQ(s.requests, 0u);
  EXPECT_EQ(server.chatRequests(), sent);
  EXPECT_EQ(test::readText(dir / "candidates.jsonl"), before);
  // Without --resume the file is not overwritten.
  o.resume = false;
  CUSET_EXPECT_THROW_WITH(runEndpointGeneration(o), "candidates.jsonl", "--resume");
  EXPECT_EQ(test::readText(dir / "candidates.jsonl"), before);
}

TEST(EndpointGeneration, ATornLastLineIsRequestedAgainAndNothingElse) {
  test::TempDir dir;
  test::OpenAiTestServer server(script());
  auto o = options(server, dir, 2);
  o.useN = false;
  runEndpointGeneration(o);
  std::string text = test::readText(dir / "candidates.jsonl");
  text.resize(text.size() - 20);  // killed mid-write
  test::writeText(dir / "candidates.jsonl", text);
  const std::size_t sent = server.chatRequests();
  o.resume = true;
  const auto s = runEndpointGeneration(o);
  EXPECT_EQ(s.reused, 5u);
  EXPECT_EQ(server.chatRequests(), sent + 1);
  EXPECT_EQ(records(dir / "candidates.jsonl").size(), 6u);
}

TEST(EndpointGeneration, AChangedParameterIsANewRequestAndTheOldSamplesAreKeptAside) {
  test::TempDir dir;
  test::OpenAiTestServer server(script());
  auto o = options(server, dir, 2);
  runEndpointGeneration(o);
  o.resume = true;
  o.parameters.temperature = 0.2;
  const auto s = runEndpointGeneration(o);
  EXPECT_EQ(s.reused, 0u);
  EXPECT_EQ(s.replaced, 6u);
  EXPECT_EQ(records(dir / "candidates.jsonl").size(), 6u);
  for (const auto& r : records(dir / "candidates.jsonl")) EXPECT_DOUBLE_EQ(r["request"]["temperature"].get<double>(), 0.2);
  EXPECT_EQ(records(dir / "candidates.jsonl.replaced.jsonl").size(), 6u);
  // A changed prompt style is a new request too.
  o.prompt = PromptStyle::cuset;
  EXPECT_EQ(runEndpointGeneration(o).reused, 0u);
}

TEST(EndpointGeneration, TheKeyReachesTheServerAndNoFile) {
  test::TempDir dir;
  test::OpenAiTestServer server(script({{"api_key", "sk-secret-4242"}}));
  ::setenv("CUSET_TEST_KEY", "sk-secret-4242", 1);
  auto o = options(server, dir, 1);
  o.endpoint.apiKeyEnv = "CUSET_TEST_KEY";
  runEndpointGeneration(o);
  for (const auto& r : server.requests()) EXPECT_EQ(r["authorization"], "Bearer sk-secret-4242");
  for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
    if (e.is_regular_file() && e.path().parent_path() != server.dir()) {
      EXPECT_EQ(test::readText(e.path()).find("sk-secret"), std::string::npos) << e.path();
    }
  }
  // A wrong key: one clear error naming the endpoint and the variable, not the key; no retries.
  ::setenv("CUSET_TEST_KEY", "sk-wrong", 1);
  o.outFile = dir / "other.jsonl";
  o.endpoint.concurrency = 1;
  const std::size_t sent = server.chatRequests();
  try {
    runEndpointGeneration(o);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(server.url()), std::string::npos) << m;
    EXPECT_NE(m.find("HTTP 401"), std::string::npos) << m;
    EXPECT_NE(m.find("$CUSET_TEST_KEY"), std::string::npos) << m;
    EXPECT_EQ(m.find("sk-wrong"), std::string::npos) << m;
  }
  EXPECT_EQ(server.chatRequests(), sent + 1);
  ::unsetenv("CUSET_TEST_KEY");
  CUSET_EXPECT_THROW_WITH(runEndpointGeneration(o), "CUSET_TEST_KEY", "not set");
}

TEST(EndpointGeneration, AWrongModelNameListsTheServedModels) {
  test::TempDir dir;
  test::OpenAiTestServer server(script());
  auto o = options(server, dir, 1);
  o.parameters.model = "codr";
  CUSET_EXPECT_THROW_WITH(runEndpointGeneration(o), server.url(), "HTTP 404", "codr", "the endpoint serves: coder");
  EXPECT_EQ(listServedModels(o.endpoint), std::vector<std::string>{"coder"});
}

TEST(EndpointGeneration, GivesUpAfterTheRetriesAndKeepsWhatFinished) {
  test::TempDir dir;
  test::OpenAiTestServer server(script({{"faults", json::array({{{"fault", "500"}, {"times", 3}, {"model", "coder"}}})}}));
  auto o = options(server, dir, 1);
  o.endpoint.concurrency = 1;
  o.endpoint.retry.maxRetries = 2;
  CUSET_EXPECT_THROW_WITH(runEndpointGeneration(o), "level1/", "gave up after 3 attempts", "HTTP 500", "--resume");
  EXPECT_EQ(server.chatRequests(), 3u);
  // The server is fine again: a resume finishes the run.
  o.resume = true;
  EXPECT_EQ(runEndpointGeneration(o).samples, 3u);
}

TEST(EndpointGeneration, NoServerIsAConnectionErrorAfterTheRetries) {
  test::TempDir dir;
  EndpointGenerateOptions o;
  o.endpoint.baseUrl = "http://127.0.0.1:9/v1";  // discard port: nothing listens
  o.endpoint.retry.maxRetries = 1;
  o.endpoint.retry.base = std::chrono::duration<double>(0.01);
  o.parameters.model = "coder";
  o.problemsDir = smallSuite(dir);
  o.outFile = dir / "c.jsonl";
  o.showProgress = false;
  CUSET_EXPECT_THROW_WITH(runEndpointGeneration(o), "http://127.0.0.1:9/v1", "connection failed", "gave up after 2 attempts");
}

TEST(EndpointGeneration, WorksOverHttps) {
  test::TempDir dir;
  const fs::path cert = dir / "cert.pem", key = dir / "key.pem";
  const std::string command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " +
                              key.string() + " -out " + cert.string() + " >/dev/null 2>&1";
  if (std::system(command.c_str()) != 0) GTEST_SKIP() << "openssl could not make a test certificate";
  test::OpenAiTestServer server(script(), {"--tls-cert", cert.string(), "--tls-key", key.string()});
  auto o = options(server, dir, 1);
  o.endpoint.baseUrl = server.url("https");
  o.endpoint.retry.maxRetries = 0;
  // Untrusted certificate: refused, as it must be.
  CUSET_EXPECT_THROW_WITH(runEndpointGeneration(o), "connection failed");
  o.endpoint.caBundle = cert;
  o.outFile = dir / "tls.jsonl";
  EXPECT_EQ(runEndpointGeneration(o).samples, 3u);
}

}  // namespace
}  // namespace cuset
