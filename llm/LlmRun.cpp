#include "llm/LlmRun.h"

#include "hw/HwConfig.h"
#include "llm/LlmLoop.h"
#include "llm/LlmWeights.h"
#include "support/FileIO.h"

#include <chrono>
#include <optional>

#include <fmt/format.h>

#include <algorithm>

namespace spyre::llm {

namespace {

constexpr size_t kKeyWidth = 11;

std::string field(const std::string &key, const std::string &value) {
  return key + std::string(kKeyWidth - std::min(key.size(), kKeyWidth - 1), ' ') +
         value + "\n";
}

std::string megabytes(int64_t bytes) {
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

std::string duration(double us) {
  return us >= 1000 ? fmt::format("{:.3f} ms", us / 1000)
                    : fmt::format("{:.2f} us", us);
}

} // namespace

double LlmReport::modelUs() const {
  if (!extrapolated())
    return stepUs();
  const double clockMhz = run.clockGhz * 1000.0;
  const double outside = static_cast<double>(outsideLayerCycles) / clockMhz;
  const double layers = std::max(0.0, stepUs() - outside);
  return layers * static_cast<double>(config.numLayers) /
             static_cast<double>(shape.layers) +
         outside;
}

double LlmReport::memoryBoundUs() const {
  return static_cast<double>(bytes.weights + bytes.cache) /
         (sustainedReadGBps * 1e3);
}

double LlmReport::computeBoundUs() const {
  const double macsPerUs = run.peakMacsPerCyclePerCore * run.cores *
                           run.clockGhz * 1e3;
  return static_cast<double>(macs) / macsPerUs;
}

double LlmReport::boundUs() const {
  return std::max(memoryBoundUs(), computeBoundUs());
}

double LlmReport::boundReached() const {
  return stepUs() > 0 ? boundUs() / stepUs() : 0.0;
}

LlmReport runLlm(const LlmRunOptions &o) {
  LlmReport report;
  report.config = loadLlmConfig(o.modelConfig);
  report.shape = o.shape;
  report.shape.layers = o.layers > 0 ? o.layers : report.config.numLayers;
  checkStepShape(report.config, report.shape);
  const hw::HwConfig hw =
      o.hwObject ? *o.hwObject : hw::loadConfigOrDefault(o.hwConfig);

  const std::unique_ptr<compiler::Graph> graph =
      buildLlmGraph(report.config, report.shape);
  run::ModelInputs inputs;
  run::RunOptions ro;
  ro.model = o.modelConfig;
  ro.graph = graph.get();
  ro.config = o.hwConfig;
  ro.configObject = o.hwObject;
  ro.optLevel = o.optLevel;
  ro.timingOnly = o.timingOnly;
  ro.check = o.check;
  ro.stats = o.stats;
  ro.trace = o.trace;
  ro.useSystemC = o.useSystemC;
  std::optional<Checkpoint> checkpoint;
  if (!o.weights.empty()) {
    checkpoint.emplace(o.weights);
    checkWeights(*checkpoint, *graph, report.config);
  }
  report.weights =
      checkpoint ? o.weights + " (" + checkpoint->description() + ")" +
                       (o.timingOnly ? ": names and shapes checked, no data "
                                       "read (--timing-only)"
                                     : "")
      : o.timingOnly ? "none (--timing-only)"
                     : "random, seed " + std::to_string(o.seed);
  if (!o.timingOnly) {
    inputs = llmInputs(*graph, report.config, report.shape, o.seed);
    if (checkpoint)
      loadWeights(*checkpoint, *graph, report.config, inputs);
    ro.given = &inputs;
  }
  // Compiled here rather than by runModel, to time it and to loop the
  // layers. Constants keep their data (the program's size is the file's).
  const auto begin = std::chrono::steady_clock::now();
  isa::Program program;
  report.looped = report.shape.layers > 1 && !o.unrolled;
  if (report.looped)
    program = compileLoopedModel(report.config, report.shape, hw, o.optLevel)
                  .program;
  else
    program = run::compileOrThrow(*graph, hw, o.optLevel).program;
  report.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  const std::string file = isa::writeProgram(program);
  report.programBytes = file.size();
  report.instructions = program.instructionCount();
  if (!o.programOut.empty())
    writeFileAtomic(o.programOut, file);
  ro.program = &program;
  ro.records = o.records || !report.looped || report.extrapolated() ||
               !o.stats.empty() || !o.trace.empty();
  report.run = run::runModel(ro);
  report.bytes = stepBytes(report.config, report.shape);
  report.macs = stepMacs(report.config, report.shape);
  report.sustainedReadGBps = hw.memory.sustainedReadGBps;
  for (const sim::OpSummary &op : report.run.ops)
    if (!op.op.empty() && op.op.rfind("model.layers.", 0) != 0)
      report.outsideLayerCycles += op.span();
  return report;
}

std::string llmSummaryText(const LlmReport &r, size_t topOps) {
  const LlmConfig &c = r.config;
  const StepShape &s = r.shape;
  std::string out = run::summaryText(r.run, topOps);
  out += "\n";
  out += field("llm", fmt::format("{}: {} layers, hidden {}, {} heads / {} "
                                  "KV heads of {}, FFN {}, vocabulary {}",
                                  c.architectureName(), c.numLayers,
                                  c.hiddenSize, c.numHeads, c.numKvHeads,
                                  c.headDim, c.intermediateSize, c.vocabSize));
  const bool prefill = s.mode == Mode::Prefill;
  out += field(
      "step", prefill
                  ? fmt::format("prefill: batch {}, {} new tokens each, "
                                "{}",
                                s.batch, s.tokens,
                                s.context == 0
                                    ? std::string("no cached context")
                                    : fmt::format("after {} cached", s.context))
                  : fmt::format("decode: batch {}, 1 new token each, "
                                "context {}",
                                s.batch, s.context));
  std::string parts = fmt::format("{} of {} layers", s.layers, c.numLayers);
  if (s.tokenIds)
    parts += ", embedding lookup";
  if (s.embedding && c.embeddingMultiplier != 1.0)
    parts += ", embedding multiplier";
  if (s.lmHead)
    parts += ", final norm and LM head";
  if (s.lmHead && s.greedy)
    parts += ", greedy next token";
  out += field("simulated", fmt::format("{}: {}", parts, duration(r.stepUs())));
  if (r.run.records)
    out += field("per layer",
                 duration((r.stepUs() -
                           static_cast<double>(r.outsideLayerCycles) /
                               (r.run.clockGhz * 1000.0)) /
                          static_cast<double>(s.layers)));
  const std::string what = prefill ? "time to first token" : "per-token latency";
  if (r.extrapolated())
    out += field(prefill ? "TTFT" : "per token",
                 fmt::format("{} for {} layers, EXTRAPOLATED (the simulated "
                             "layers x {}/{}{}), {}",
                             duration(r.modelUs()), c.numLayers, c.numLayers,
                             s.layers,
                             s.tokenIds && s.lmHead ? ""
                             : s.lmHead ? "; embedding lookup not included"
                             : s.tokenIds ? "; LM head not included"
                                          : "; embedding lookup and LM head "
                                            "not included",
                             what));
  else
    out += field(prefill ? "TTFT" : "per token",
                 fmt::format("{} for all {} layers, simulated{}, {}",
                             duration(r.modelUs()), c.numLayers,
                             s.lmHead ? "" : " (LM head not included)", what));
  const bool memoryBound = r.memoryBoundUs() >= r.computeBoundUs();
  out += field("bound",
               fmt::format("{} for the simulated step, {}-bound: weights {}{} "
                           "read once at {} GB/s = {}; {} MACs at the PT peak "
                           "= {}",
                           duration(r.boundUs()),
                           memoryBound ? "memory" : "compute",
                           megabytes(r.bytes.weights),
                           r.bytes.cache > 0
                               ? " + KV cache " + megabytes(r.bytes.cache)
                               : std::string(),
                           r.sustainedReadGBps, duration(r.memoryBoundUs()),
                           r.macs, duration(r.computeBoundUs())));
  out += field("reached", fmt::format("{:.1f}% of the bound",
                                      100.0 * r.boundReached()));
  out += field("weights", r.weights);
  out += field("host ops", std::to_string(r.run.hostOps));
  out += field("program",
               fmt::format("{} bytes, {} instructions{}", r.programBytes,
                           r.instructions,
                           r.looped ? fmt::format(": one layer's code in a "
                                                  "loop over {} layers",
                                                  s.layers)
                           : s.layers > 1 ? fmt::format(": {} copies of the "
                                                        "layer's code",
                                                        s.layers)
                                          : std::string()));
  out += field("compile", fmt::format("{:.2f} s", r.compileSeconds));
  return out;
}

} // namespace spyre::llm
