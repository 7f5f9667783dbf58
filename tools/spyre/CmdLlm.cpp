// `spyre llm`: a decoder language model's prefill or decode step from its
// Hugging Face config.json, compiled and simulated, with its time to first
// token or per-token latency against the step's bound (llm/LlmRun.h;
// docs/llm.md).
#include "Commands.h"

#include "llm/LlmLadder.h"
#include "llm/LlmRun.h"
#include "support/Diagnostic.h"

#include <iostream>
#include <memory>

namespace spyre::cli {

namespace {

/// What main() returns for a bug (an uncaught exception).
constexpr int kInternalErrorExit = 70;

struct LlmCliOptions {
  llm::LlmRunOptions run;
  std::string mode;
  int64_t batch = 1;
  int64_t tokens = 0;
  int64_t context = -1;
  bool ladder = false;
};

int runLlm(LlmCliOptions &o) {
  llm::StepShape &s = o.run.shape;
  s.mode = o.mode == "prefill" ? llm::Mode::Prefill : llm::Mode::Decode;
  s.batch = o.batch;
  if (s.mode == llm::Mode::Prefill) {
    s.tokens = o.tokens > 0 ? o.tokens : 512;
    s.context = o.context < 0 ? 0 : o.context;
  } else {
    s.tokens = o.tokens > 0 ? o.tokens : 1;
    s.context = o.context < 0 ? 4096 : o.context;
  }
  try {
    if (o.ladder) {
      std::cout << llm::ladderTable(
          llm::runLadder(o.run.modelConfig, o.run.hwConfig, s));
      return 0;
    }
    const llm::LlmReport report = llm::runLlm(o.run);
    std::cout << llm::llmSummaryText(report);
    return report.run.exitCode();
  } catch (const run::CompileError &e) {
    std::cout.flush();
    std::cerr << e.diagnostics();
    return e.internal() ? kInternalErrorExit
                        : static_cast<int>(ExitCode::BadInput);
  }
}

} // namespace

void addLlmCommand(CLI::App &app, Dispatch &dispatch) {
  auto opts = std::make_shared<LlmCliOptions>();
  CLI::App *cmd = app.add_subcommand(
      "llm", "Build a decoder language model's prefill or decode step from "
             "its config.json, compile and simulate it: time to first token "
             "or per-token latency against the memory bound");
  cmd->add_option("model", opts->run.modelConfig,
                  "Hugging Face config.json (LlamaForCausalLM or "
                  "GraniteForCausalLM)")
      ->required();
  cmd->add_option("--mode", opts->mode,
                  "prefill: new tokens with no cached context; decode: one "
                  "new token per sequence against a key/value cache")
      ->required()
      ->check(CLI::IsMember({"prefill", "decode"}));
  cmd->add_option("--batch", opts->batch, "Sequences (default 1)");
  cmd->add_option("--tokens", opts->tokens,
                  "New tokens per sequence (prefill; default 512)");
  cmd->add_option("--context", opts->context,
                  "Cached tokens per sequence (decode; default 4096)");
  cmd->add_option("--layers", opts->run.layers,
                  "Decoder layers to simulate (default: all); the model's "
                  "figures are then extrapolated");
  cmd->add_flag("--lm-head", opts->run.shape.lmHead,
                "Add the final norm and the LM head (the logits of each "
                "sequence's last token)");
  cmd->add_flag("--embedding", opts->run.shape.embedding,
                "Scale the input by Granite's embedding multiplier (the "
                "lookup itself is the input)");
  cmd->add_option("-O", opts->run.optLevel,
                  "Optimisation level: -O0, -O1, -O2 (default)")
      ->check(CLI::Range(0, 2));
  cmd->add_option("--config", opts->run.hwConfig,
                  "Hardware config YAML (default: the built-in Spyre config)");
  cmd->add_flag("--timing-only", opts->run.timingOnly,
                "Skip the numbers (no weights): time and check the schedule "
                "only");
  cmd->add_flag("--check", opts->run.check,
                "Compare every output with the double-precision host "
                "reference fed the same weights (exit 3 on a mismatch)");
  cmd->add_option("--seed", opts->run.seed,
                  "Seed of the random weights and inputs (default 1)");
  cmd->add_flag("--ladder", opts->ladder,
                "Print IBM's ladder for the step's shape instead: every rung "
                "of one layer, the layer and the whole model, timing only, "
                "as docs/llm.md tabulates it");
  cmd->add_option("--stats", opts->run.stats,
                  "Write the simulator's statistics JSON to this file");
  cmd->add_option("--trace", opts->run.trace,
                  "Write a Chrome trace-event JSON (Perfetto UI) to this file");
  cmd->callback([opts, &dispatch] {
    dispatch.run = [opts] { return runLlm(*opts); };
  });
}

} // namespace spyre::cli
