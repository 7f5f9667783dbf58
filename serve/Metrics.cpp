#include "serve/Metrics.h"

#include "support/Diagnostic.h"
#include "support/ParseNumber.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace spyre::serve {

double percentile(const std::vector<double> &sorted, double p) {
  if (sorted.empty())
    return 0;
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Distribution distribution(std::vector<double> values) {
  Distribution d;
  if (values.empty())
    return d;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values)
    sum += v;
  d.count = static_cast<int64_t>(values.size());
  d.mean = sum / static_cast<double>(values.size());
  d.p50 = percentile(values, 50);
  d.p90 = percentile(values, 90);
  d.p99 = percentile(values, 99);
  d.max = values.back();
  return d;
}

Slo parseSlo(const std::string &text) {
  Slo slo;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos
                                                      : comma - start);
    const size_t eq = item.find('=');
    auto bad = [&](const std::string &why) {
      return UserError(SourceLoc{"--slo"},
                       fmt::format("{} in '{}'; expected KEY=MS,... with keys "
                                   "ttft, itl, tpot, e2el",
                                   why, item),
                       ExitCode::Usage);
    };
    if (eq == std::string::npos)
      throw bad("no '='");
    const std::string key = item.substr(0, eq);
    double ms = 0;
    if (parseDouble(item.substr(eq + 1), ms) != DoubleParse::Ok || !(ms > 0) ||
        ms > 1e9)
      throw bad("the milliseconds must be a number in (0, 1e9]");
    std::optional<double> *slot = key == "ttft"   ? &slo.ttftMs
                                  : key == "itl"  ? &slo.itlMs
                                  : key == "tpot" ? &slo.tpotMs
                                  : key == "e2el" ? &slo.e2elMs
                                                  : nullptr;
    if (!slot)
      throw bad("unknown key '" + key + "'");
    if (*slot)
      throw bad("'" + key + "' given twice");
    *slot = ms;
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return slo;
}

RequestMetrics requestMetrics(const RequestRecord &r, const Slo &slo) {
  RequestMetrics m;
  const double arrival = r.request.arrivalS * 1e6;
  m.queueMs = (r.scheduledUs - arrival) / 1e3;
  m.ttftMs = (r.firstTokenUs - arrival) / 1e3;
  m.e2elMs = (r.finishUs - arrival) / 1e3;
  const size_t n = r.tokenUs.size();
  if (n > 1) {
    m.tpotMs = (r.finishUs - r.firstTokenUs) / 1e3 / static_cast<double>(n - 1);
    m.meanItlMs = m.tpotMs;
    for (size_t i = 1; i < n; ++i)
      m.maxItlMs = std::max(m.maxItlMs, (r.tokenUs[i] - r.tokenUs[i - 1]) / 1e3);
  }
  m.good = !r.rejected && (!slo.ttftMs || m.ttftMs <= *slo.ttftMs) &&
           (!slo.itlMs || m.maxItlMs <= *slo.itlMs) &&
           (!slo.tpotMs || m.tpotMs <= *slo.tpotMs) &&
           (!slo.e2elMs || m.e2elMs <= *slo.e2elMs);
  return m;
}

Summary summarize(const ServeResult &result, const Slo &slo) {
  Summary s;
  s.slo = slo;
  std::vector<double> ttft, tpot, itl, e2el, queue;
  double first = -1, last = 0;
  for (const RequestRecord &r : result.requests) {
    ++s.requests;
    s.prefixes |= r.request.prefixId >= 0;
    const double arrival = r.request.arrivalS * 1e6;
    first = first < 0 ? arrival : std::min(first, arrival);
    if (r.rejected) {
      ++s.rejected;
      continue;
    }
    SPYRE_ASSERT(static_cast<int64_t>(r.tokenUs.size()) ==
                     r.request.outputTokens,
                 "a finished request has all its tokens");
    ++s.completed;
    s.inputTokens += r.request.promptTokens;
    s.outputTokens += r.request.outputTokens;
    s.cachedTokens += r.cachedTokens;
    last = std::max(last, r.finishUs);
    const RequestMetrics m = requestMetrics(r, slo);
    ttft.push_back(m.ttftMs);
    e2el.push_back(m.e2elMs);
    queue.push_back(m.queueMs);
    if (r.tokenUs.size() > 1)
      tpot.push_back(m.tpotMs);
    for (size_t i = 1; i < r.tokenUs.size(); ++i)
      itl.push_back((r.tokenUs[i] - r.tokenUs[i - 1]) / 1e3);
    s.good += m.good ? 1 : 0;
  }
  s.durationS = s.completed > 0 ? (last - first) / 1e6 : 0;
  if (s.durationS > 0) {
    s.requestThroughput = static_cast<double>(s.completed) / s.durationS;
    s.outputThroughput = static_cast<double>(s.outputTokens) / s.durationS;
    s.totalTokenThroughput =
        static_cast<double>(s.inputTokens + s.outputTokens) / s.durationS;
    s.goodput = static_cast<double>(s.good) / s.durationS;
  }
  s.ttft = distribution(std::move(ttft));
  s.tpot = distribution(std::move(tpot));
  s.itl = distribution(std::move(itl));
  s.e2el = distribution(std::move(e2el));
  s.queue = distribution(std::move(queue));
  int64_t decodeSteps = 0, decodeSeqs = 0;
  for (const StepRecord &st : result.steps) {
    ++s.steps;
    if (st.kind == StepKind::Prefill) {
      ++s.prefillSteps;
    } else {
      ++decodeSteps;
      decodeSeqs += static_cast<int64_t>(st.slots.size());
    }
    s.peakKvBlocks = std::max(s.peakKvBlocks, st.kvBlocksUsed);
  }
  if (decodeSteps > 0)
    s.meanBatch =
        static_cast<double>(decodeSeqs) / static_cast<double>(decodeSteps);
  return s;
}

} // namespace spyre::serve
