#include "serve/StepCost.h"

#include "llm/LlmRun.h"
#include "support/Diagnostic.h"

#include <algorithm>

namespace spyre::serve {

int64_t roundUpPow2Multiple(int64_t n, int64_t base) {
  SPYRE_ASSERT(n >= 1 && base >= 1, "bucket of a non-positive count");
  int64_t v = base;
  while (v < n)
    v *= 2;
  return v;
}

StepShape padded(const StepShape &exact) {
  auto blocks = [](int64_t n) {
    return (n + kBlockTokens - 1) / kBlockTokens * kBlockTokens;
  };
  StepShape s = exact;
  if (s.kind == StepKind::Prefill) {
    s.tokens = blocks(s.tokens);
    s.context = blocks(s.context); // 0: nothing cached
  } else {
    s.context = blocks(std::max<int64_t>(s.context, 1));
  }
  return s;
}

namespace {

/// The two edges around n (lo <= n <= hi) and n's weight on hi.
struct Edges {
  int64_t lo = 0, hi = 0;
  double towardHi = 0;
};

Edges edgesOf(int64_t n, int64_t base) {
  const int64_t hi = roundUpPow2Multiple(n, base);
  if (hi == base || hi == n)
    return {hi, hi, 0};
  const int64_t lo = hi / 2;
  return {lo, hi, static_cast<double>(n - lo) / static_cast<double>(hi - lo)};
}

} // namespace

std::vector<std::pair<StepShape, double>>
bucketCorners(const StepShape &shape, const BucketRule &rule) {
  if (rule.exact)
    return {{shape, 1.0}};
  const bool prefill = shape.kind == StepKind::Prefill;
  const Edges b = edgesOf(shape.batch, 1);
  // A decode step's tokens are one. A prefill's context is none, or the
  // tokens its sequence already has in the cache (a later chunk, a
  // multiple of the chunk size, so few values): simulated as it is, since
  // a chunk's cost moves in steps where its attention's plan changes (the
  // tile size, the keys taken in chunks; docs/kernels.md).
  const Edges t = prefill ? edgesOf(shape.tokens, rule.tokenBase)
                          : Edges{shape.tokens, shape.tokens, 0};
  const Edges x = prefill ? Edges{shape.context, shape.context, 0}
                          : edgesOf(shape.context, rule.contextBase);
  auto weight = [](const Edges &e, int hi) {
    return hi ? e.towardHi : 1 - e.towardHi;
  };
  std::vector<std::pair<StepShape, double>> out;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k) {
        const double w = weight(b, i) * weight(t, j) * weight(x, k);
        if (w == 0)
          continue;
        StepShape s = shape;
        s.batch = i ? b.hi : b.lo;
        s.tokens = j ? t.hi : t.lo;
        s.context = k ? x.hi : x.lo;
        out.emplace_back(s, w);
      }
  return out;
}

double deviceUs(StepCostModel &costs, const StepShape &shape,
                const BucketRule &rule) {
  double us = 0;
  for (const auto &[corner, weight] : bucketCorners(shape, rule))
    us += weight * costs.cost(corner).deviceUs;
  return us;
}

StepCost SimulatedStepCost::cost(const StepShape &shape) {
  auto it = memo_.find(shape);
  if (it != memo_.end())
    return it->second;
  llm::LlmRunOptions o;
  o.modelConfig = options_.modelConfig;
  o.hwConfig = options_.hwConfig;
  o.optLevel = options_.optLevel;
  o.layers = options_.simulatedLayers;
  o.timingOnly = true;
  o.useSystemC = false;
  o.shape.mode =
      shape.kind == StepKind::Prefill ? llm::Mode::Prefill : llm::Mode::Decode;
  o.shape.batch = shape.batch;
  o.shape.tokens = shape.tokens;
  o.shape.context = shape.context;
  // The step as the server runs it: token ids in (the embedding lookup on
  // the device), the layers, the final norm and LM head; the logits go to
  // the host, which samples (HostCosts).
  o.shape.tokenIds = true;
  o.shape.embedding = true;
  o.shape.lmHead = true;
  const llm::LlmReport r = llm::runLlm(o);
  const double clockMhz = r.run.clockGhz * 1000.0;
  StepCost c;
  c.headUs = static_cast<double>(r.outsideLayerCycles) / clockMhz;
  c.layerUs = (r.stepUs() - c.headUs) / static_cast<double>(r.shape.layers);
  c.deviceUs = r.modelUs();
  memo_.emplace(shape, c);
  return c;
}

HostCosts hostCosts(const hw::HwConfig &hw, const llm::LlmConfig &model) {
  HostCosts h;
  h.stepUs = hw.host.stepOverheadUs;
  h.samplePerSequenceUs = hw.host.sampleUsPerSequence;
  h.launchUs = hw.host.launchUs;
  h.pcieGBps = hw.host.pcieGBps;
  h.pcieLatencyUs =
      static_cast<double>(hw.host.pcieLatencyCycles) / (hw.chip.clockGhz * 1e3);
  h.logitsBytesPerSequence = model.vocabSize * 2;
  return h;
}

StepTime stepTime(const HostCosts &h, double deviceUs, int64_t inputTokens,
                  int64_t logitRows, int64_t sampled) {
  StepTime t;
  const double bytesPerUs = h.pcieGBps * 1e3;
  t.hostUs = h.stepUs + h.samplePerSequenceUs * static_cast<double>(sampled);
  t.launchUs = h.launchUs;
  t.h2dUs = h.pcieLatencyUs +
            static_cast<double>(h.tokenIdBytes * inputTokens) / bytesPerUs;
  t.deviceUs = deviceUs;
  if (sampled > 0)
    t.d2hUs = h.pcieLatencyUs +
              static_cast<double>(h.logitsBytesPerSequence * logitRows) /
                  bytesPerUs;
  return t;
}

int64_t weightBytes(const llm::LlmConfig &m) {
  constexpr int64_t kDeviceBytes = 2; // DL16
  const int64_t embedding = m.vocabSize * m.hiddenSize;
  const int64_t params = m.layerParameters() * m.numLayers + m.hiddenSize +
                         embedding * (m.tieWordEmbeddings ? 1 : 2);
  return params * kDeviceBytes;
}

int64_t kvBytesPerToken(const llm::LlmConfig &m) {
  return 2 /* K and V */ * m.numLayers * m.numKvHeads * m.headDim * 2;
}

} // namespace spyre::serve
