// `cuset merge-adapter ADAPTER_DIR --out DIR`
#include <fmt/format.h>

#include "commands.hpp"
#include "cuset/trainer/lora.hpp"

namespace cuset::cli {

void registerMergeAdapterCommand(CLI::App& app, CommandContext& context) {
  struct Options {
    std::string adapter, out;
    bool bf16 = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("merge-adapter", "Fold a LoRA adapter folder (PEFT format, as `cuset train` writes) into a full HF checkpoint");
  cmd->add_option("adapter", o->adapter,
                  "Adapter folder: adapter_config.json and adapter_model.safetensors (the base is its base_model_name_or_path)")
      ->required();
  cmd->add_option("--out", o->out, "Folder for config.json, model.safetensors and tokenizer.json")->required();
  cmd->add_flag("--bf16", o->bf16, "Write the weights in bfloat16 (default float32)");
  cmd->callback([o, &context] {
    mergeAdapterFolder(o->adapter, o->out, o->bf16);
    fmt::print("merged {} into {}\n", o->adapter, o->out);
    context.exitCode = 0;
  });
}

}  // namespace cuset::cli
