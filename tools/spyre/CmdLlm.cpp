// `spyre llm`: a decoder language model's prefill or decode step from its
// Hugging Face config.json, compiled and simulated, with its time to first
// token or per-token latency against the step's bound (llm/LlmRun.h;
// docs/llm.md).
#include "Commands.h"
#include "IntOption.h"

#include "llm/LlmGenerate.h"
#include "llm/LlmLadder.h"
#include "llm/LlmRun.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <algorithm>
#include <iostream>
#include <memory>

namespace spyre::cli {

namespace {

struct LlmCliOptions {
  llm::LlmRunOptions run;
  std::string mode;
  int64_t batch = 1;
  int64_t tokens = 0;
  int64_t context = -1;
  int64_t generate = 0;
  int64_t prompt = 0;
  int64_t chunk = 0;
  bool paged = false;
  bool hostSampling = false;
  bool generateGiven = false, promptGiven = false, batchGiven = false;
  bool chunkGiven = false, tokensGiven = false, contextGiven = false;
  bool ladder = false;
};

UserError usage(const char *flag, const std::string &message) {
  return UserError(SourceLoc{flag}, message, ExitCode::Usage);
}

int runGenerate(LlmCliOptions &o) {
  if (!o.mode.empty())
    throw usage("--mode", "--generate runs a prefill and then decode steps; "
                          "it takes no --mode");
  const std::vector<std::pair<const char *, bool>> stepOnly = {
      {"--tokens", o.tokensGiven},
      {"--lm-head", o.run.shape.lmHead},
      {"--embedding", o.run.shape.embedding},
      {"--stats", !o.run.stats.empty()},
      {"--trace", !o.run.trace.empty()},
      {"--ladder", o.ladder}};
  for (const auto &[flag, given] : stepOnly)
    if (given)
      throw usage(flag, "is an option of one step (--mode), not of --generate");
  llm::GenerateOptions g;
  g.modelConfig = o.run.modelConfig;
  g.hwConfig = o.run.hwConfig;
  g.layers = o.run.layers;
  g.optLevel = o.run.optLevel;
  g.timingOnly = o.run.timingOnly;
  g.check = o.run.check;
  g.seed = o.run.seed;
  g.weights = o.run.weights;
  g.batch = o.batch;
  if (o.promptGiven)
    g.promptTokens = o.prompt;
  g.steps = o.generate;
  if (o.chunkGiven)
    g.chunk = o.chunk;
  g.paged = o.paged;
  g.unrolled = o.run.unrolled;
  g.hostSampling = o.hostSampling;
  if (o.contextGiven) {
    if (o.promptGiven)
      throw usage("--context", "starts the sequences with cached tokens "
                               "instead of a prompt; it takes no --prompt");
    g.context = o.context;
  }
  const llm::GenerateReport report = llm::runGeneration(g);
  std::cout << llm::generationText(report);
  return report.exitCode();
}

/// No --mode: the model's prefill (batch 1, 512 tokens) and decode step
/// (batch 4, context 4096), each with the embedding multiplier, every layer
/// and the LM head, timing only.
int runModelSteps(LlmCliOptions &o) {
  const std::vector<std::pair<const char *, bool>> stepOnly = {
      {"--check", o.run.check},
      {"--stats", !o.run.stats.empty()},
      {"--trace", !o.run.trace.empty()},
      {"--program-out", !o.run.programOut.empty()},
      {"--ladder", o.ladder}};
  for (const auto &[flag, given] : stepOnly)
    if (given)
      throw usage(flag, "is an option of one step: give --mode prefill or "
                        "--mode decode (without --mode, spyre llm times the "
                        "model's prefill and decode step)");
  // Both steps are checked before either runs, so that a bad count is
  // named before any figure is printed.
  std::vector<llm::LlmRunOptions> steps;
  for (const llm::Mode mode : {llm::Mode::Prefill, llm::Mode::Decode}) {
    llm::LlmRunOptions r = o.run;
    r.timingOnly = true;
    // Two runs in one process: the SystemC kernel elaborates only once (the
    // plain event loop gives the same results).
    r.useSystemC = false;
    r.records = false;
    llm::StepShape &s = r.shape;
    s.mode = mode;
    // The whole step: token ids in, the embedding lookup, the layers, the
    // LM head and the greedy next token out.
    s.embedding = true;
    s.tokenIds = true;
    s.lmHead = true;
    s.greedy = true;
    if (mode == llm::Mode::Prefill) {
      s.batch = 1;
      s.tokens = o.tokensGiven ? o.tokens : 512;
      s.context = 0;
    } else {
      s.batch = o.batchGiven ? o.batch : 4;
      s.tokens = 1;
      s.context = o.contextGiven ? o.context : 4096;
    }
    steps.push_back(std::move(r));
  }
  const llm::LlmConfig config = llm::loadLlmConfig(o.run.modelConfig);
  for (const llm::LlmRunOptions &r : steps)
    llm::checkStepShape(config, r.shape);
  int exit = 0;
  for (const llm::LlmRunOptions &r : steps) {
    const llm::LlmReport report = llm::runLlm(r);
    std::cout << (r.shape.mode == llm::Mode::Prefill ? "" : "\n")
              << llm::llmSummaryText(report);
    exit = std::max(exit, report.run.exitCode());
  }
  return exit;
}

int runLlm(LlmCliOptions &o) {
  if (o.generateGiven || o.promptGiven) {
    if (!o.generateGiven)
      throw usage("--prompt", "is the prompt of --generate N");
    try {
      return runGenerate(o);
    } catch (const run::CompileError &e) {
      std::cout.flush();
      std::cerr << e.diagnostics();
      return e.internal() ? static_cast<int>(ExitCode::Internal)
                          : static_cast<int>(ExitCode::BadInput);
    }
  }
  if (o.paged)
    throw usage("--paged", "is a cache layout of --generate N");
  if (o.chunkGiven)
    throw usage("--chunk", "is the prefill's chunk of --generate N");
  if (o.hostSampling)
    throw usage("--host-sampling", "is a sampling path of --generate N");
  if (o.mode.empty()) {
    try {
      return runModelSteps(o);
    } catch (const run::CompileError &e) {
      std::cout.flush();
      std::cerr << e.diagnostics();
      return e.internal() ? static_cast<int>(ExitCode::Internal)
                          : static_cast<int>(ExitCode::BadInput);
    }
  }
  llm::StepShape &s = o.run.shape;
  s.mode = o.mode == "prefill" ? llm::Mode::Prefill : llm::Mode::Decode;
  s.batch = o.batch;
  if (s.mode == llm::Mode::Prefill) {
    s.tokens = o.tokensGiven ? o.tokens : 512;
    s.context = o.contextGiven ? o.context : 0;
  } else {
    s.tokens = o.tokensGiven ? o.tokens : 1;
    s.context = o.contextGiven ? o.context : 4096;
  }
  try {
    if (o.ladder) {
      if (!o.run.weights.empty())
        throw usage("--weights", "the ladder is timing only and reads no "
                                 "weights");
      std::cout << llm::ladderTable(
          llm::runLadder(o.run.modelConfig, o.run.hwConfig, s));
      return 0;
    }
    s.tokenIds = s.embedding;
    s.greedy = s.lmHead;
    // A looped run of every layer needs no per-instruction records.
    o.run.records = false;
    const llm::LlmReport report = llm::runLlm(o.run);
    // With an output on standard output the summary goes to the side.
    const bool stdoutTaken = isStdout(o.run.stats) || isStdout(o.run.trace);
    (stdoutTaken ? std::cerr : std::cout) << llm::llmSummaryText(report);
    return report.run.exitCode();
  } catch (const run::CompileError &e) {
    std::cout.flush();
    std::cerr << e.diagnostics();
    return e.internal() ? static_cast<int>(ExitCode::Internal)
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
                  "prefill: new tokens per sequence, after --context "
                  "cached ones (default none); decode: one new token per "
                  "sequence against a key/value cache")
      ->check(CLI::IsMember({"prefill", "decode"}));
  CLI::Option *generate =
      cmd->add_option("--generate", opts->generate,
                      "Greedy generation on a persistent device: a prefill of "
                      "the prompt, then N decode steps against the key/value "
                      "cache in device memory (instead of --mode)");
  cmd->add_flag("--paged", opts->paged,
                "With --generate: a paged key/value cache (64-token pages "
                "from a pool, a block table per sequence) instead of a row "
                "of pages per sequence");
  cmd->add_flag("--host-sampling", opts->hostSampling,
                "With --generate: send every step's logits to the host and "
                "take the arg-max there (the path of a sampler other than "
                "greedy), instead of the arg-max on the device sending back "
                "one id per sequence");
  CLI::Option *chunk = cmd->add_option(
      "--chunk", opts->chunk,
      "With --generate: prefill the prompts in chunks of at most "
      "N tokens, each after the chunks before it (chunked "
      "prefill), instead of in one step");
  CLI::Option *prompt =
      cmd->add_option("--prompt", opts->prompt,
                      "Prompt tokens per sequence of --generate (seeded ids; "
                      "default 60)");
  CLI::Option *batch = cmd->add_option("--batch", opts->batch,
                  "Sequences (default 1; 4 for the decode step without "
                  "--mode)");
  CLI::Option *tokens = cmd->add_option("--tokens", opts->tokens,
                  "New tokens per sequence (prefill; default 512)");
  CLI::Option *context = cmd->add_option("--context", opts->context,
                  "Cached tokens per sequence (decode: default 4096; "
                  "prefill: default 0); with "
                  "--generate --timing-only, tokens of no value the decode "
                  "steps start from instead of a prefill");
  cmd->add_option("--layers", opts->run.layers,
                  "Decoder layers to simulate (default: all); the model's "
                  "figures are then extrapolated");
  cmd->add_flag("--lm-head", opts->run.shape.lmHead,
                "Add the final norm, the LM head (the logits of each "
                "sequence's last token) and the greedy next token on the "
                "device (next_token)");
  cmd->add_flag("--embedding", opts->run.shape.embedding,
                "Start from token ids (input_ids): the embedding lookup on "
                "the device, then Granite's embedding multiplier");
  cmd->add_option("-O", opts->run.optLevel,
                  "Optimisation level: -O0, -O1, -O2 (default)")
      ->check(wholeNumberIn(0, 2));
  cmd->add_option("--config", opts->run.hwConfig,
                  "Hardware config YAML (default: the built-in Spyre config)");
  cmd->add_flag("--timing-only", opts->run.timingOnly,
                "Skip the numbers (no weights): time and check the schedule "
                "only");
  cmd->add_flag("--check", opts->run.check,
                "Compare every output with the double-precision host "
                "reference fed the same weights (exit 3 on a mismatch)");
  cmd->add_option("--seed", opts->run.seed,
                  "Seed of the random weights (without --weights) and "
                  "inputs (default 1)")
      ->check(wholeNumberIn(0, UINT64_MAX));
  cmd->add_option("--weights", opts->run.weights,
                  "The weights from a checkpoint instead of the seed: a "
                  ".safetensors file, or a folder with "
                  "model.safetensors.index.json and its shards, with "
                  "model.safetensors, or of NAME.npy files (tensor names as "
                  "Hugging Face's; with --timing-only only the headers are "
                  "checked)");
  cmd->add_flag("--ladder", opts->ladder,
                "Print IBM's ladder for the step's shape instead: every rung "
                "of one layer, the layer and the whole model, timing only, "
                "as docs/llm.md tabulates it");
  cmd->add_flag("--unrolled", opts->run.unrolled,
                "Compile every layer's own copy of the code instead of one "
                "layer's code in a loop over the layers");
  cmd->add_option("--program-out", opts->run.programOut,
                  "Write the compiled program file here (spyre verify, "
                  "spyre sim read it)");
  cmd->add_option("--stats", opts->run.stats,
                  "Write the simulator's statistics JSON to this file");
  cmd->add_option("--trace", opts->run.trace,
                  "Write a Chrome trace-event JSON (Perfetto UI) to this file");
  cmd->callback([opts, generate, prompt, batch, chunk, tokens, context,
                 &dispatch] {
    opts->generateGiven = generate->count() > 0;
    opts->chunkGiven = chunk->count() > 0;
    opts->tokensGiven = tokens->count() > 0;
    opts->contextGiven = context->count() > 0;
    opts->promptGiven = prompt->count() > 0;
    opts->batchGiven = batch->count() > 0;
    dispatch.run = [opts] { return runLlm(*opts); };
  });
}

} // namespace spyre::cli
