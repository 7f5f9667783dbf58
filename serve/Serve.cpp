#include "serve/Serve.h"

#include "hw/HwConfig.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "support/SvgChart.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace spyre::serve {

namespace {

using ojson = nlohmann::ordered_json;

std::string kindName(StepKind k) {
  return k == StepKind::Prefill ? "prefill" : "decode";
}

std::string shapeText(const StepShape &s) {
  if (s.kind == StepKind::Decode)
    return fmt::format("decode batch {} context {}", s.batch, s.context);
  return s.context == 0
             ? fmt::format("prefill batch {} tokens {}", s.batch, s.tokens)
             : fmt::format("prefill batch {} tokens {} context {}", s.batch,
                           s.tokens, s.context);
}

} // namespace

const std::vector<std::string> &serveOutputNames() {
  static const std::vector<std::string> names = {
      "requests.csv", "summary.json", "trace.json", "report.html"};
  return names;
}

ServeReport runServe(const ServeOptions &o, StepCostModel *costs) {
  // The configs first, then the trace: errors in the order the command
  // line names the files.
  llm::loadLlmConfig(o.modelConfig);
  hw::loadConfigOrDefault(o.hwConfig);
  return runServe(o, loadTrace(o.trace), costs);
}

ServeReport runServe(const ServeOptions &o, const std::vector<Request> &requests,
                     StepCostModel *costs) {
  ServeReport report;
  report.options = o;
  report.model = llm::loadLlmConfig(o.modelConfig);
  const hw::HwConfig hw = hw::loadConfigOrDefault(o.hwConfig);
  report.hwName = hw.name;
  if (!o.outDir.empty())
    checkWritableFolder(o.outDir, serveOutputNames(), "outputs folder");
  if (o.simulatedLayers < 1 || o.simulatedLayers > report.model.numLayers)
    throw UserError(SourceLoc{"--simulated-layers"},
                    fmt::format("must be in [1, {}], got {}",
                                report.model.numLayers, o.simulatedLayers),
                    ExitCode::Usage);

  ServerOptions &s = report.server;
  s.batching = o.batching;
  s.maxNumSeqs = o.maxNumSeqs;
  s.maxModelLen = o.maxModelLen;
  s.chunkSize = o.chunkSize;
  s.prefixCaching = o.prefixCaching;
  s.warmupShapes = o.warmupShapes;
  s.buckets = o.buckets;
  s.host = hostCosts(hw, report.model);
  report.kvBytesPerToken = kvBytesPerToken(report.model);
  report.oneTime.weightBytes = weightBytes(report.model);
  report.oneTime.weightLoadS = static_cast<double>(report.oneTime.weightBytes) /
                               (hw.host.pcieGBps * 1e9);
  if (o.numKvBlocks > 0) {
    s.kvBlocks = o.numKvBlocks;
  } else {
    const double usable =
        static_cast<double>(hw.memory.sizeBytes) * o.memoryUtilization -
        static_cast<double>(report.oneTime.weightBytes);
    const double perBlock =
        static_cast<double>(report.kvBytesPerToken * kBlockTokens);
    if (usable < perBlock)
      throw UserError(SourceLoc{"--memory-utilization"},
                      fmt::format("the weights ({:.1f} GB) leave no room for a "
                                  "KV-cache block in {:.0f}% of the device's "
                                  "{:.1f} GB",
                                  static_cast<double>(
                                      report.oneTime.weightBytes) /
                                      1e9,
                                  o.memoryUtilization * 100,
                                  static_cast<double>(hw.memory.sizeBytes) /
                                      1e9),
                      ExitCode::Usage);
    s.kvBlocks = static_cast<int64_t>(std::floor(usable / perBlock));
  }

  SimulatedStepCost simulated(
      {o.modelConfig, o.hwConfig, o.optLevel, o.simulatedLayers});
  StepCostModel &model = costs ? *costs : simulated;
  report.result = simulateServer(requests, s, model);
  report.summary = summarize(report.result, o.slo);
  report.stepCosts = model.memo();
  report.oneTime.programs =
      s.batching == Batching::Static
          ? 2 * static_cast<int64_t>(s.warmupShapes.size())
          : static_cast<int64_t>(report.stepCosts.size());
  return report;
}

std::string serveSummaryText(const ServeReport &r) {
  const Summary &s = r.summary;
  const ServerOptions &o = r.server;
  std::string out;
  auto line = [&](const std::string &key, const std::string &value) {
    out += fmt::format("{:<34} {}\n", key + ":", value);
  };
  auto section = [&](const std::string &title) {
    out += fmt::format("{:-^50}\n", title);
  };
  out += fmt::format("{:=^50}\n", " Serving Benchmark Result ");
  line("Model", fmt::format("{}, {} layers, on {}", r.model.architectureName(),
                            r.model.numLayers,
                            r.hwName.empty() ? "the built-in config"
                                             : r.hwName));
  if (o.batching == Batching::Continuous)
    line("Batching",
         fmt::format("continuous: max-num-seqs {}, max-model-len {}, chunk "
                     "{}, KV cache {} blocks of {} tokens{}",
                     o.maxNumSeqs, o.maxModelLen, o.chunkSize, o.kvBlocks,
                     kBlockTokens,
                     o.prefixCaching ? "" : ", no prefix caching"));
  else {
    std::string shapes;
    for (const WarmupShape &w : o.warmupShapes)
      shapes += fmt::format("{}{}:{}:{}", shapes.empty() ? "" : ", ",
                            w.promptLength, w.newTokens, w.batch);
    line("Batching", "static: warmup shapes " + shapes);
  }
  line("Successful requests", std::to_string(s.completed));
  line("Rejected requests", std::to_string(s.rejected));
  line("Benchmark duration (s)", fmt::format("{:.2f}", s.durationS));
  line("Total input tokens", std::to_string(s.inputTokens));
  line("Total generated tokens", std::to_string(s.outputTokens));
  if (s.prefixes)
    line("Prefix cache hits",
         fmt::format("{} of the input tokens ({:.1f}%)", s.cachedTokens,
                     s.inputTokens > 0
                         ? 100.0 * static_cast<double>(s.cachedTokens) /
                               static_cast<double>(s.inputTokens)
                         : 0.0));
  line("Request throughput (req/s)", fmt::format("{:.2f}", s.requestThroughput));
  if (s.slo.any())
    line("Request goodput (req/s)", fmt::format("{:.2f}", s.goodput));
  line("Output token throughput (tok/s)",
       fmt::format("{:.2f}", s.outputThroughput));
  line("Total Token throughput (tok/s)",
       fmt::format("{:.2f}", s.totalTokenThroughput));
  auto dist = [&](const std::string &title, const std::string &name,
                  const Distribution &d) {
    section(title);
    line("Mean " + name + " (ms)", fmt::format("{:.2f}", d.mean));
    line("Median " + name + " (ms)", fmt::format("{:.2f}", d.p50));
    line("P90 " + name + " (ms)", fmt::format("{:.2f}", d.p90));
    line("P99 " + name + " (ms)", fmt::format("{:.2f}", d.p99));
  };
  dist("Time to First Token", "TTFT", s.ttft);
  dist("Time per Output Token (excl. 1st token)", "TPOT", s.tpot);
  dist("Inter-token Latency", "ITL", s.itl);
  dist("End-to-end Latency", "E2EL", s.e2el);
  section("Server");
  line("Mean queueing delay (ms)", fmt::format("{:.2f}", s.queue.mean));
  line("Steps (prefill)", fmt::format("{} ({})", s.steps, s.prefillSteps));
  line("Mean decode batch", fmt::format("{:.2f} of {}", s.meanBatch,
                                        r.result.slots));
  line("Peak KV-cache use",
       fmt::format("{} of {} blocks", s.peakKvBlocks, o.kvBlocks));
  line("Step shapes simulated", std::to_string(r.stepCosts.size()));
  section("One-time");
  line("Weight load (s)",
       fmt::format("{:.2f} ({:.2f} GB over PCIe)", r.oneTime.weightLoadS,
                   static_cast<double>(r.oneTime.weightBytes) / 1e9));
  line("Programs compiled", std::to_string(r.oneTime.programs));
  out += fmt::format("{:=^50}\n", "");
  return out;
}

std::string requestsCsv(const ServeReport &r) {
  std::string out = "id,arrival_s,first_token_s,finish_s,prompt_tokens,"
                    "output_tokens,cached_tokens,slot,queue_ms,ttft_ms,"
                    "tpot_ms,mean_itl_ms,e2e_ms,status\n";
  for (const RequestRecord &rec : r.result.requests) {
    const Request &q = rec.request;
    if (rec.rejected) {
      out +=
          fmt::format("{},{:.6f},,,{},{},,,,,,,,rejected: {}\n", q.id,
                      q.arrivalS, q.promptTokens, q.outputTokens, rec.reason);
      continue;
    }
    const RequestMetrics m = requestMetrics(rec, r.summary.slo);
    out += fmt::format(
        "{},{:.6f},{:.6f},{:.6f},{},{},{},{},{:.3f},{:.3f},"
        "{:.3f},{:.3f},{:.3f},{}\n",
        q.id, q.arrivalS, rec.firstTokenUs / 1e6, rec.finishUs / 1e6,
        q.promptTokens, q.outputTokens, rec.cachedTokens, rec.slot, m.queueMs,
        m.ttftMs, m.tpotMs, m.meanItlMs, m.e2elMs,
        r.summary.slo.any() && !m.good ? "ok (missed SLO)" : "ok");
  }
  return out;
}

namespace {

ojson distJson(const Distribution &d) {
  ojson j;
  j["count"] = d.count;
  j["mean"] = d.mean;
  j["median"] = d.p50;
  j["p90"] = d.p90;
  j["p99"] = d.p99;
  j["max"] = d.max;
  return j;
}

ojson shapeJson(const StepShape &s) {
  ojson j;
  j["mode"] = kindName(s.kind);
  j["batch"] = s.batch;
  j["tokens"] = s.tokens;
  j["context"] = s.context;
  return j;
}

} // namespace

std::string summaryJson(const ServeReport &r) {
  const Summary &s = r.summary;
  const ServerOptions &o = r.server;
  ojson j;
  j["model"] = r.options.modelConfig;
  j["architecture"] = r.model.architectureName();
  j["layers"] = r.model.numLayers;
  j["hardware"] = r.hwName;
  j["trace"] = r.options.trace;
  ojson server;
  server["batching"] =
      o.batching == Batching::Continuous ? "continuous" : "static";
  if (o.batching == Batching::Continuous) {
    server["max_num_seqs"] = o.maxNumSeqs;
    server["max_model_len"] = o.maxModelLen;
    server["chunk_size"] = o.chunkSize;
    server["prefix_caching"] = o.prefixCaching;
  } else {
    ojson shapes = ojson::array();
    for (const WarmupShape &w : o.warmupShapes)
      shapes.push_back({{"prompt_length", w.promptLength},
                        {"new_tokens", w.newTokens},
                        {"batch", w.batch}});
    server["warmup_shapes"] = shapes;
  }
  server["kv_cache_blocks"] = o.kvBlocks;
  server["kv_block_tokens"] = kBlockTokens;
  server["kv_bytes_per_token"] = r.kvBytesPerToken;
  ojson bucket;
  bucket["padding"] = fmt::format("tokens and context to whole {}-token "
                                  "blocks",
                                  kBlockTokens);
  if (o.batching == Batching::Static)
    bucket["static"] = "each warmup shape simulated as it is";
  else if (o.buckets.exact)
    bucket["exact"] = "each padded shape simulated";
  else
    bucket["interpolated"] = fmt::format(
        "linearly between edges: batch a power of two, prefill tokens {} x "
        "a power of two, decode context {} x a power of two, the context "
        "of a later prefill chunk as it is",
        o.buckets.tokenBase, o.buckets.contextBase);
  server["bucket_rule"] = bucket;
  ojson host;
  host["step_overhead_us"] = o.host.stepUs;
  host["sample_us_per_sequence"] = o.host.samplePerSequenceUs;
  host["launch_us"] = o.host.launchUs;
  host["pcie_gb_per_s"] = o.host.pcieGBps;
  host["pcie_latency_us"] = o.host.pcieLatencyUs;
  host["token_id_bytes"] = o.host.tokenIdBytes;
  host["logits_bytes_per_sequence"] = o.host.logitsBytesPerSequence;
  server["host"] = host;
  j["server"] = server;
  j["simulated_layers"] = r.options.simulatedLayers;

  j["num_prompts"] = s.requests;
  j["completed"] = s.completed;
  j["rejected"] = s.rejected;
  j["duration"] = s.durationS;
  j["total_input_tokens"] = s.inputTokens;
  j["total_output_tokens"] = s.outputTokens;
  j["request_throughput"] = s.requestThroughput;
  j["output_throughput"] = s.outputThroughput;
  j["total_token_throughput"] = s.totalTokenThroughput;
  if (s.slo.any()) {
    ojson slo;
    if (s.slo.ttftMs)
      slo["ttft_ms"] = *s.slo.ttftMs;
    if (s.slo.itlMs)
      slo["itl_ms"] = *s.slo.itlMs;
    if (s.slo.tpotMs)
      slo["tpot_ms"] = *s.slo.tpotMs;
    if (s.slo.e2elMs)
      slo["e2el_ms"] = *s.slo.e2elMs;
    j["slo"] = slo;
    j["good_requests"] = s.good;
    j["request_goodput"] = s.goodput;
  }
  j["ttft_ms"] = distJson(s.ttft);
  j["tpot_ms"] = distJson(s.tpot);
  j["itl_ms"] = distJson(s.itl);
  j["e2el_ms"] = distJson(s.e2el);
  j["queue_ms"] = distJson(s.queue);
  j["steps"] = s.steps;
  j["prefill_steps"] = s.prefillSteps;
  j["mean_decode_batch"] = s.meanBatch;
  j["peak_kv_blocks"] = s.peakKvBlocks;
  j["prefix_cache_hit_tokens"] = s.cachedTokens;
  ojson once;
  once["weight_bytes"] = r.oneTime.weightBytes;
  once["weight_load_s"] = r.oneTime.weightLoadS;
  once["programs"] = r.oneTime.programs;
  j["one_time"] = once;
  ojson costs = ojson::array();
  for (const auto &[shape, c] : r.stepCosts) {
    ojson e = shapeJson(shape);
    e["layer_us"] = c.layerUs;
    e["head_us"] = c.headUs;
    e["device_us"] = c.deviceUs;
    costs.push_back(e);
  }
  j["step_costs"] = costs;
  return j.dump(2) + "\n";
}

std::string perfettoTrace(const ServeReport &r) {
  // Chrome trace-event JSON, times in microseconds. Thread 0 holds the
  // arrivals, thread k + 1 batch slot k.
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  out += "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":"
         "\"server\"}},\n";
  out += "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"thread_name\",\"args\":"
         "{\"name\":\"arrivals\"}},\n";
  for (int64_t k = 0; k < r.result.slots; ++k)
    out += fmt::format("{{\"ph\":\"M\",\"pid\":1,\"tid\":{},\"name\":"
                       "\"thread_name\",\"args\":{{\"name\":\"slot {}\"}}}},\n",
                       k + 1, k);
  for (const RequestRecord &rec : r.result.requests) {
    const double at = rec.request.arrivalS * 1e6;
    out += fmt::format("{{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":{:.3f},"
                       "\"dur\":0,\"name\":\"request {}\",\"args\":{{\"prompt\":"
                       "{},\"output\":{}{}}}}},\n",
                       at, rec.request.id, rec.request.promptTokens,
                       rec.request.outputTokens,
                       rec.rejected ? ",\"rejected\":true" : "");
  }
  std::vector<bool> flowed(r.result.requests.size(), false);
  for (const StepRecord &st : r.result.steps) {
    const std::string name =
        st.kind == StepKind::Prefill ? "prefill" : "decode";
    for (const auto &[slot, req] : st.slots) {
      out += fmt::format(
          "{{\"ph\":\"X\",\"pid\":1,\"tid\":{},\"ts\":{:.3f},\"dur\":{:.3f},"
          "\"name\":\"{}\",\"args\":{{\"request\":{},\"shape\":\"{}\","
          "\"device_us\":{:.3f}}}}},\n",
          slot + 1, st.startUs, st.time.totalUs(), name, req,
          shapeText(st.shape), st.time.deviceUs);
      const RequestRecord &rec = r.result.requests[static_cast<size_t>(req)];
      if (!flowed[static_cast<size_t>(req)] && st.endUs() == rec.firstTokenUs) {
        flowed[static_cast<size_t>(req)] = true;
        out += fmt::format("{{\"ph\":\"s\",\"pid\":1,\"tid\":0,\"ts\":{:.3f},"
                           "\"id\":{},\"cat\":\"request\",\"name\":\"first "
                           "token\"}},\n",
                           rec.request.arrivalS * 1e6, req);
        out += fmt::format("{{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":{},"
                           "\"ts\":{:.3f},\"id\":{},\"cat\":\"request\","
                           "\"name\":\"first token\"}},\n",
                           slot + 1, st.startUs, req);
      }
    }
    out += fmt::format("{{\"ph\":\"C\",\"pid\":1,\"ts\":{:.3f},\"name\":"
                       "\"server\",\"args\":{{\"sequences\":{},\"waiting\":{},"
                       "\"kv_blocks\":{}}}}},\n",
                       st.endUs(), st.occupied, st.waiting, st.kvBlocksUsed);
  }
  out.erase(out.size() - 2); // the last ",\n"
  out += "\n]}\n";
  return out;
}

namespace {

std::string escapeHtml(const std::string &s) { return htmlEscape(s); }

/// An axis label: whole numbers from 100 up, three digits below.
std::string tick(double v) {
  return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

constexpr double kChartW = 640, kChartH = 220, kPadL = 56, kPadB = 36,
                 kPadT = 24, kPadR = 12;

std::string axes(const std::string &title, const std::string &xLabel,
                 double xMax, const std::string &yLabel, double yMax) {
  const double w = kChartW - kPadL - kPadR, h = kChartH - kPadT - kPadB;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\">\n<text x=\"{}\" y=\"16\" font-size=\"13\" "
      "font-weight=\"bold\">{}</text>\n",
      kChartW, kChartH, kChartW, kChartH, kPadL, escapeHtml(title));
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
                     "fill=\"none\" stroke=\"#888\"/>\n",
                     kPadL, kPadT, w, h);
  for (int i = 0; i <= 4; ++i) {
    const double fx = i / 4.0;
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" "
                       "text-anchor=\"middle\">{}</text>\n",
                       kPadL + fx * w, kPadT + h + 14, tick(fx * xMax));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" "
                       "text-anchor=\"end\">{}</text>\n",
                       kPadL - 4, kPadT + h - fx * h + 3, tick(fx * yMax));
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" "
                     "text-anchor=\"middle\">{}</text>\n",
                     kPadL + w / 2, kChartH - 4, escapeHtml(xLabel));
  out += fmt::format("<text x=\"12\" y=\"{:.1f}\" font-size=\"11\" "
                     "text-anchor=\"middle\" transform=\"rotate(-90 12 "
                     "{:.1f})\">{}</text>\n",
                     kPadT + h / 2, kPadT + h / 2, escapeHtml(yLabel));
  return out;
}

std::string histogram(const std::string &title, const std::string &xLabel,
                      std::vector<double> values) {
  constexpr int kBins = 40;
  if (values.empty())
    return "<p>" + escapeHtml(title) + ": no sample.</p>\n";
  std::sort(values.begin(), values.end());
  // The top 0.5% of values would stretch the axis; they fall in the last
  // bin.
  double xMax = percentile(values, 99.5);
  if (!(xMax > 0))
    xMax = std::max(values.back(), 1e-3);
  std::vector<int64_t> bins(kBins, 0);
  for (double v : values)
    ++bins[static_cast<size_t>(
        std::clamp(static_cast<int>(v / xMax * kBins), 0, kBins - 1))];
  const int64_t top = *std::max_element(bins.begin(), bins.end());
  std::string out = axes(title, xLabel, xMax, "count", static_cast<double>(top));
  const double w = kChartW - kPadL - kPadR, h = kChartH - kPadT - kPadB;
  for (int i = 0; i < kBins; ++i) {
    const double bh = static_cast<double>(bins[static_cast<size_t>(i)]) /
                      static_cast<double>(top) * h;
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                       "height=\"{:.1f}\" fill=\"#4a7ebb\"/>\n",
                       kPadL + i * w / kBins + 0.5, kPadT + h - bh,
                       w / kBins - 1, bh);
  }
  return out + "</svg>\n";
}

/// A value held from each step's end to the next, sampled at most 1,000
/// times over the run.
std::string series(const std::string &title, const std::string &yLabel,
                   const std::vector<std::pair<double, double>> &points,
                   double yMax, double xMaxS) {
  std::string out = axes(title, "time (s)", xMaxS, yLabel, yMax);
  if (points.empty() || !(xMaxS > 0) || !(yMax > 0))
    return out + "</svg>\n";
  const double w = kChartW - kPadL - kPadR, h = kChartH - kPadT - kPadB;
  constexpr int kSamples = 1000;
  std::string path;
  size_t i = 0;
  double value = 0;
  for (int k = 0; k <= kSamples; ++k) {
    const double t = xMaxS * k / kSamples;
    while (i < points.size() && points[i].first <= t)
      value = points[i++].second;
    path += fmt::format("{}{:.1f},{:.1f}", k == 0 ? "M" : " L",
                        kPadL + w * k / kSamples,
                        kPadT + h - std::min(value / yMax, 1.0) * h);
  }
  out += "<path d=\"" + path +
         "\" fill=\"none\" stroke=\"#c0504d\" stroke-width=\"1\"/>\n";
  return out + "</svg>\n";
}

} // namespace

std::string htmlReport(const ServeReport &r) {
  std::vector<double> ttft, itl;
  for (const RequestRecord &rec : r.result.requests) {
    if (rec.rejected)
      continue;
    ttft.push_back((rec.firstTokenUs - rec.request.arrivalS * 1e6) / 1e3);
    for (size_t i = 1; i < rec.tokenUs.size(); ++i)
      itl.push_back((rec.tokenUs[i] - rec.tokenUs[i - 1]) / 1e3);
  }
  std::vector<std::pair<double, double>> occupancy, kv;
  double end = 0;
  for (const StepRecord &st : r.result.steps) {
    occupancy.emplace_back(st.endUs() / 1e6, static_cast<double>(st.occupied));
    kv.emplace_back(st.endUs() / 1e6,
                    100.0 * static_cast<double>(st.kvBlocksUsed) /
                        static_cast<double>(r.server.kvBlocks));
    end = st.endUs() / 1e6;
  }
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>spyre "
      "serve</title>\n<style>body{font-family:sans-serif;margin:24px}"
      "pre{background:#f4f4f4;padding:8px}svg{display:block;margin:12px "
      "0}</style></head><body>\n<h1>spyre serve: " +
      escapeHtml(r.options.trace) + "</h1>\n<pre>" +
      escapeHtml(serveSummaryText(r)) + "</pre>\n";
  out += histogram("Time to first token", "TTFT (ms)", std::move(ttft));
  out += histogram("Inter-token latency", "ITL (ms)", std::move(itl));
  out += series("Batch occupancy", "sequences", occupancy,
                static_cast<double>(r.result.slots), end);
  double kvMax = 0;
  for (const auto &p : kv)
    kvMax = std::max(kvMax, p.second);
  out += series(fmt::format("KV-cache use (% of {} blocks)", r.server.kvBlocks),
                "%", kv, kvMax > 0 ? std::min(100.0, kvMax * 1.25) : 1.0, end);
  out += "</body></html>\n";
  return out;
}

void writeServeOutputs(const ServeReport &r) {
  const std::filesystem::path dir(r.options.outDir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw UserError(SourceLoc{r.options.outDir},
                    "cannot create outputs folder: " + ec.message());
  writeFileAtomic((dir / "requests.csv").string(), requestsCsv(r));
  writeFileAtomic((dir / "summary.json").string(), summaryJson(r));
  writeFileAtomic((dir / "trace.json").string(), perfettoTrace(r));
  writeFileAtomic((dir / "report.html").string(), htmlReport(r));
}

} // namespace spyre::serve
