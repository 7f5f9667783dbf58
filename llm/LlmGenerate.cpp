#include "llm/LlmGenerate.h"
#include "llm/LlmGraph.h"

#include "compiler/ref/Random.h"
#include "hw/HwConfig.h"
#include "run/RunModel.h"
#include "support/Diagnostic.h"
#include "support/TensorCompare.h"
#include "support/TextTable.h"

#include <fmt/format.h>

#include <algorithm>

namespace spyre::llm {

namespace {

constexpr size_t kKeyWidth = 11;
/// Largest batch, prompt and step count of a generation: far beyond what a
/// simulation of one step per token can run, small enough for every
/// product of them.
constexpr int64_t kMaxGenerate = int64_t(1) << 16;

std::string field(const std::string &key, const std::string &value) {
  return key +
         std::string(kKeyWidth - std::min(key.size(), kKeyWidth - 1), ' ') +
         value + "\n";
}

std::string duration(double us) {
  return us >= 1000 ? fmt::format("{:.3f} ms", us / 1000)
                    : fmt::format("{:.2f} us", us);
}

std::string tokenList(const std::vector<int64_t> &tokens) {
  std::string out;
  for (int64_t t : tokens)
    out += (out.empty() ? "" : " ") + std::to_string(t);
  return out;
}

} // namespace

bool GenerateReport::checkFailed() const {
  return std::any_of(checks.begin(), checks.end(), [](const SequenceCheck &c) {
    return !c.tokensEqual || c.logitsOutside > 0;
  });
}

size_t GenerateReport::findings() const {
  size_t n = 0;
  for (const DeviceStep &s : steps)
    n += s.run.findings.size();
  return n;
}

int GenerateReport::exitCode() const {
  return checkFailed() || findings() > 0
             ? static_cast<int>(ExitCode::VerifyFailed)
             : static_cast<int>(ExitCode::Ok);
}

std::vector<std::vector<int64_t>> seededPrompts(int64_t batch, int64_t tokens,
                                                int64_t vocab, uint64_t seed) {
  std::vector<std::vector<int64_t>> prompts;
  for (int64_t b = 0; b < batch; ++b) {
    compiler::ref::Pcg32 rng(seed, static_cast<uint64_t>(b) + 1);
    std::vector<int64_t> p;
    for (int64_t i = 0; i < tokens; ++i)
      p.push_back(
          static_cast<int64_t>(rng.next() % static_cast<uint64_t>(vocab)));
    prompts.push_back(std::move(p));
  }
  return prompts;
}

GenerateReport runGeneration(const GenerateOptions &o) {
  if (o.timingOnly && o.check)
    throw UserError(SourceLoc{"--check"},
                    "--timing-only computes no numbers, so there is nothing to "
                    "check",
                    ExitCode::Usage);
  GenerateReport r;
  r.options = o;
  r.config = loadLlmConfig(o.modelConfig);
  checkRange("--batch", o.batch, 1, kMaxGenerate);
  checkRange("--prompt", o.promptTokens, 1, kMaxGenerate);
  checkRange("--generate", o.steps, 1, kMaxGenerate);
  if (o.chunk) {
    checkRange("--chunk", *o.chunk, 1, kMaxGenerate);
    if (o.context)
      throw UserError(SourceLoc{"--chunk"},
                      "is a chunk of the prompt's prefill; --context "
                      "starts without one",
                      ExitCode::Usage);
  }
  if (o.context) {
    if (!o.timingOnly)
      throw UserError(SourceLoc{"--context"},
                      "starts the sequences with cached tokens of no value, "
                      "which only --timing-only allows",
                      ExitCode::Usage);
    checkRange("--context", *o.context, 1, kMaxGenerate);
  }
  checkRange("--layers", o.layers == 0 ? r.config.numLayers : o.layers, 1,
             r.config.numLayers);
  const hw::HwConfig hw =
      o.hwObject ? *o.hwObject : hw::loadConfigOrDefault(o.hwConfig);
  r.clockGhz = hw.chip.clockGhz;

  LlmDeviceOptions d;
  d.slots = o.batch;
  d.capacity = o.context.value_or(o.promptTokens) + o.steps;
  d.layers = o.layers;
  d.paged = o.paged;
  d.unrolled = o.unrolled;
  d.optLevel = o.optLevel;
  d.numerics = !o.timingOnly;
  d.seed = o.seed;
  d.weights = o.weights;
  d.hostSampling = o.hostSampling;
  LlmDevice device(r.config, hw, d);
  r.layers = device.layers();
  r.capacity = device.capacity();
  r.weightBytes = device.weightBytes();
  r.weightLoadCycles = device.weightLoadCycles();

  std::vector<int64_t> slots;
  for (int64_t b = 0; b < o.batch; ++b)
    slots.push_back(b);
  if (o.context) {
    for (int64_t slot : slots)
      device.assumeCached(slot, *o.context);
  } else {
    r.prompts =
        seededPrompts(o.batch, o.promptTokens, r.config.vocabSize, o.seed);
    const int64_t chunk = o.chunk.value_or(o.promptTokens);
    for (int64_t at = 0; at < o.promptTokens; at += chunk) {
      const int64_t n = std::min(chunk, o.promptTokens - at);
      std::vector<std::vector<int64_t>> pieces;
      for (const std::vector<int64_t> &p : r.prompts)
        pieces.emplace_back(p.begin() + at, p.begin() + at + n);
      r.steps.push_back(device.prefill(slots, pieces));
    }
    r.prefillSteps = r.steps.size();
  }
  for (int64_t i = 0; i < o.steps; ++i)
    r.steps.push_back(device.decode(
        slots, r.steps.empty()
                   ? std::vector<int64_t>(static_cast<size_t>(o.batch), 0)
                   : r.steps.back().tokens));
  for (int64_t slot : slots)
    r.blockTables.push_back(device.blockTable(slot));
  // Tokens: from the last chunk of the prefill on (an earlier chunk's
  // arg-max is not a token of the sequence).
  const size_t firstToken = r.prefillSteps > 0 ? r.prefillSteps - 1 : 0;
  r.tokens.resize(static_cast<size_t>(o.batch));
  for (size_t i = firstToken; i < r.steps.size(); ++i)
    for (size_t b = 0; b < r.steps[i].tokens.size(); ++b)
      r.tokens[b].push_back(r.steps[i].tokens[b]);

  if (!o.check)
    return r;
  const compiler::ref::TensorMap weights = device.storedWeights();
  for (size_t b = 0; b < r.prompts.size(); ++b) {
    const ReferenceGeneration ref =
        referenceGenerate(r.config, r.layers, weights, device.embeddingTable(),
                          r.prompts[b], o.steps);
    SequenceCheck c;
    c.reference = ref.tokens;
    c.tokensEqual = ref.tokens == r.tokens[b];
    c.firstDifference = static_cast<size_t>(
        std::mismatch(ref.tokens.begin(), ref.tokens.end(), r.tokens[b].begin())
            .first -
        ref.tokens.begin());
    for (size_t i = 0; i < ref.logits.size(); ++i) {
      const Tolerance tol = run::outputTolerance(ref.logits[i]);
      const TensorComparison cmp =
          compareTensors(r.steps[firstToken + i].logits[b], ref.logits[i], tol);
      c.logitsOutside += cmp.outside;
      if (cmp.maxAbsDiff >= c.maxAbsDiff) {
        c.maxAbsDiff = cmp.maxAbsDiff;
        c.worstAllowed = tol.allowed(ref.logits[i][cmp.worst]);
      }
    }
    r.checks.push_back(std::move(c));
  }
  return r;
}

std::string generationText(const GenerateReport &r) {
  const LlmConfig &c = r.config;
  const GenerateOptions &o = r.options;
  std::string out;
  out +=
      field("model", fmt::format("{} ({}): {} of {} layers, hidden {}, {} "
                                 "heads / {} KV heads of {}, vocabulary {}",
                                 c.architectureName(), o.modelConfig, r.layers,
                                 c.numLayers, c.hiddenSize, c.numHeads,
                                 c.numKvHeads, c.headDim, c.vocabSize));
  out += field("level", "-O" + std::to_string(o.optLevel));
  out += field("device",
               fmt::format("weights {:.2f} MB written once ({} over PCIe, "
                           "before the first step and not in its time); "
                           "KV cache of {} tokens per sequence in {}-token "
                           "pages ({}), written in place",
                           static_cast<double>(r.weightBytes) / 1e6,
                           duration(r.us(r.weightLoadCycles)), r.capacity,
                           kCachePageTokens,
                           o.paged ? "paged: a pool and a block table per "
                                     "sequence"
                                   : "contiguous"));
  out += field("weights",
               !o.weights.empty()
                   ? o.weights + (o.timingOnly
                                      ? ": names and shapes checked, no data "
                                        "read (--timing-only)"
                                      : "")
               : o.timingOnly ? std::string("none (--timing-only)")
                              : "random, seed " + std::to_string(o.seed));
  out += field("tokens in", "ids (4 bytes each), looked up on the device "
                            "(embedding)");
  out += field("sampling",
               o.hostSampling
                   ? "logits to the host (2 bytes a logit), arg-max there "
                     "(--host-sampling)"
                   : "greedy arg-max on the device, one id (4 bytes) per "
                     "sequence back");
  if (o.context)
    out += field("prompt", fmt::format("none: {} cached tokens of no value "
                                       "per sequence (--context)",
                                       *o.context));
  for (size_t b = 0; b < r.prompts.size(); ++b)
    out += field(b == 0 ? "prompt" : "",
                 fmt::format("seq {}: {} tokens, seed {}", b,
                             r.prompts[b].size(), o.seed));

  out += "\nsteps (cycles at " + fmt::format("{}", r.clockGhz) + " GHz)\n";
  std::vector<std::vector<std::string>> rows = {
      {"step", "positions", "inputs in", "launch", "program",
       r.options.hostSampling ? "logits out" : "tokens out", "total", "time",
       "bytes in", "bytes out"}};
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const DeviceStep &s = r.steps[i];
    std::string positions;
    for (int64_t p : s.shape.positions)
      positions += (positions.empty() ? "" : ",") +
                   (s.shape.mode == Mode::Prefill
                        ? fmt::format("{}-{}", p, p + s.shape.tokens - 1)
                        : std::to_string(p));
    rows.push_back({s.shape.mode == Mode::Decode
                        ? "decode " + std::to_string(i + 1 - r.prefillSteps)
                    : r.prefillSteps == 1
                        ? std::string("prefill")
                        : fmt::format("prefill {}/{}", i + 1, r.prefillSteps),
                    positions, std::to_string(s.inputCycles),
                    std::to_string(s.launchCycles),
                    std::to_string(s.programCycles),
                    std::to_string(s.outputCycles), std::to_string(s.cycles()),
                    duration(r.us(s.cycles())), std::to_string(s.inputBytes),
                    std::to_string(s.outputBytes)});
  }
  out += textTable(rows, {true, true, false, false, false, false, false, false,
                          false, false});
  out += "\n";

  if (!o.timingOnly)
    for (size_t b = 0; b < r.tokens.size(); ++b)
      out += field(b == 0 ? "tokens" : "",
                   fmt::format("seq {}: {}", b, tokenList(r.tokens[b])));
  if (o.paged)
    for (size_t b = 0; b < r.blockTables.size(); ++b)
      out += field(b == 0 ? "pages" : "",
                   fmt::format("seq {}: {}", b, tokenList(r.blockTables[b])));
  const DeviceStep &first = r.steps.front();
  if (r.prefillSteps > 1) {
    uint64_t cycles = 0, program = 0;
    for (size_t i = 0; i < r.prefillSteps; ++i) {
      cycles += r.steps[i].cycles();
      program += r.steps[i].programCycles;
    }
    out += field("TTFT",
                 fmt::format("{} (prefill of {} tokens x {} in {} chunks of at "
                             "most {}, each after the ones before it: "
                             "programs {}, the rest transfers and launches)",
                             duration(r.us(cycles)), o.promptTokens,
                             first.shape.batch, r.prefillSteps,
                             o.chunk.value_or(o.promptTokens),
                             duration(r.us(program))));
  } else if (first.shape.mode == Mode::Prefill) {
    out += field("TTFT",
                 fmt::format("{} (prefill of {} tokens x {}: program {}, token "
                             "ids and {} in {}, launch {}, {} out {})",
                             duration(r.us(first.cycles())), first.shape.tokens,
                             first.shape.batch,
                             duration(r.us(first.programCycles)),
                             first.shape.rotary == Rotary::Ids
                                 ? "positions"
                                 : "rotary tables",
                             duration(r.us(first.inputCycles)),
                             duration(r.us(first.launchCycles)),
                             first.greedyOnDevice ? "next tokens" : "logits",
                             duration(r.us(first.outputCycles))));
  } else {
    out += field("TTFT", fmt::format("none: the sequences start with {} "
                                     "cached tokens of no value (--context)",
                                     o.context.value_or(0)));
  }
  uint64_t decodeCycles = 0;
  size_t decodeSteps = 0;
  for (const DeviceStep &s : r.steps)
    if (s.shape.mode == Mode::Decode) {
      decodeCycles += s.cycles();
      ++decodeSteps;
    }
  out += field(
      "per token",
      fmt::format(
          "{} mean over {} decode steps of batch {} ({} "
          "tokens/s)",
          duration(r.us(decodeCycles) / static_cast<double>(decodeSteps)),
          decodeSteps, first.shape.batch,
          fmt::format("{:.0f}", static_cast<double>(decodeSteps) *
                                    static_cast<double>(first.shape.batch) /
                                    (r.us(decodeCycles) * 1e-6))));
  out += field("host",
               std::string("embedding lookup on the device (token ids in); ") +
                   (o.hostSampling
                        ? "arg-max on the host (logits out)"
                        : "greedy arg-max on the device (token ids out)") +
                   "; transfers charged over PCIe; each step a program "
                   "compiled for its positions" +
                   (r.layers > 1 && !o.unrolled
                        ? ", one layer's code in a loop over the layers"
                        : std::string()));
  size_t hostOps = 0;
  for (const DeviceStep &s : r.steps)
    hostOps += s.run.hostOps;
  out += field("host ops", std::to_string(hostOps));

  if (o.timingOnly) {
    out += field("check", "none (--timing-only computes no numbers)");
  } else if (r.checks.empty()) {
    out += field("check", "not asked for (--check)");
  } else {
    out += field("check", r.checkFailed()
                              ? std::string("MISMATCH against the double-"
                                            "precision reference")
                              : std::string("ok: tokens identical to the "
                                            "double-precision reference, "
                                            "logits within the DL16 "
                                            "tolerance"));
    for (size_t b = 0; b < r.checks.size(); ++b) {
      const SequenceCheck &k = r.checks[b];
      out += fmt::format(
          "  seq {}: tokens {}, logits {} ({} values), max |difference| "
          "{:.6g} where {:.6g} is allowed\n",
          b,
          k.tokensEqual
              ? std::string("equal")
              : fmt::format("DIFFER from step {} (reference: {})",
                            k.firstDifference, tokenList(k.reference)),
          k.logitsOutside == 0
              ? std::string("ok")
              : fmt::format("{} OUTSIDE the tolerance", k.logitsOutside),
          r.steps.size() * static_cast<size_t>(c.vocabSize), k.maxAbsDiff,
          k.worstAllowed);
    }
  }
  out += field("findings", std::to_string(r.findings()));
  for (const DeviceStep &s : r.steps)
    for (const std::string &f : s.run.findings)
      out += "  " + f + "\n";
  return out;
}

} // namespace spyre::llm
