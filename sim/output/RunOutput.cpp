// The run's statistics and trace (RunOutput.h).
#include "sim/output/RunOutput.h"

#include "sim/analysis/Summary.h"
#include "support/Diagnostic.h"
#include "support/Hash.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace spyre::sim {

namespace {

using ordered_json = nlohmann::ordered_json;

double cyclesToUs(Cycle c, double clockGhz) {
  return static_cast<double>(c) / (clockGhz * 1000.0);
}

ordered_json findingJson(const Finding &f) {
  ordered_json j;
  j["kind"] = std::string(findingKindName(f.kind));
  j["cycle"] = f.cycle;
  j["core"] = f.core;
  j["stream"] = f.stream;
  j["instruction"] = f.instrIndex;
  j["text"] = f.instrText;
  j["source_op"] = f.sourceOp;
  j["address_range"] = f.addressRange;
  j["conflicting"] = f.conflicting;
  j["message"] = f.message;
  return j;
}

double peakMacsPerCyclePerCore(const hw::HwConfig &cfg) {
  return static_cast<double>(cfg.ptMacsPerCycle()) *
         static_cast<double>(cfg.chip.coreletsPerCore);
}

} // namespace

std::string statsJson(const Machine &m, const OpEstimates *estimates) {
  const hw::HwConfig &cfg = m.config();
  const double ghz = cfg.chip.clockGhz;
  const Cycle total = m.totalCycles();
  const double us = cyclesToUs(total, ghz);
  ordered_json j;
  j["program"] = m.program().name;
  j["config_fingerprint"] = hw::fingerprintString(cfg.fingerprint());
  j["total_cycles"] = total;
  j["clock_ghz"] = ghz;
  j["simulated_us"] = us;
  j["instructions"] = m.instructionsExecuted();
  j["dram_read_bytes"] = m.deviceReadBytes();
  j["dram_write_bytes"] = m.deviceWriteBytes();
  j["mac_ops"] = m.macOps();
  j["peak_macs_per_cycle_per_core"] = peakMacsPerCyclePerCore(cfg);
  const double seconds = us * 1e-6;
  j["achieved_tflops"] =
      seconds > 0 ? 2.0 * static_cast<double>(m.macOps()) / seconds / 1e12 : 0.0;
  j["achieved_dram_gbps"] =
      seconds > 0 ? static_cast<double>(m.deviceReadBytes() + m.deviceWriteBytes()) /
                        seconds / 1e9
                  : 0.0;
  const MemoryChannel &mem = m.timing().memory();
  j["memory"] = {{"peak_gbps", mem.peakGBps()},
                 {"sustained_bytes_per_cycle", mem.sustainedBytesPerCycle()},
                 {"busy_cycles", mem.busyCycles()},
                 {"turnarounds", mem.stats().turnarounds},
                 {"paired_bytes", mem.stats().pairedBytes},
                 {"mixed_penalty_cycles", mem.stats().mixedPenaltyCycles},
                 {"waited_cycles", mem.stats().waitedCycles}};
  ordered_json findings = ordered_json::array();
  for (const Finding &f : m.findings())
    findings.push_back(findingJson(f));
  j["findings"] = findings;
  j["findings_dropped"] = m.findingsDropped();

  ordered_json cores = ordered_json::array();
  for (int core = 0; core < cfg.chip.cores; ++core) {
    ordered_json engines = ordered_json::array();
    for (int s = 0; s < m.numStreams(); ++s) {
      const isa::Stream &code = m.streamCode(s);
      if (code.core != core)
        continue;
      const EngineStats &es = m.streamStats(s);
      ordered_json e;
      e["engine"] = isa::engineUnitName(code.engine, code.unit);
      e["instructions"] = es.instructions;
      e["busy_cycles"] = es.busyCycles;
      ordered_json stalls;
      Cycle stalled = 0;
      for (int r = 0; r < kNumStallReasons; ++r) {
        stalls[std::string(stallReasonName(static_cast<StallReason>(r)))] =
            es.stallCycles[static_cast<size_t>(r)];
        stalled += es.stallCycles[static_cast<size_t>(r)];
      }
      e["stall_cycles"] = stalls;
      e["idle_cycles"] = total >= es.busyCycles + stalled
                             ? total - es.busyCycles - stalled
                             : 0;
      e["utilization"] =
          total > 0 ? static_cast<double>(es.busyCycles) / static_cast<double>(total)
                    : 0.0;
      engines.push_back(e);
    }
    if (engines.empty())
      continue;
    ordered_json c;
    c["core"] = core;
    c["lx_high_water_bytes"] = m.lxHighWaterSticks(core) * isa::kStickBytes;
    c["engines"] = engines;
    cores.push_back(c);
  }
  j["cores"] = cores;
  if (!m.program().hostOps.empty()) {
    // Host fallback ops: PCIe transfers both ways and host compute, in chip
    // cycles (docs/sim-output.md).
    ordered_json ops = ordered_json::array();
    uint64_t toHost = 0, fromHost = 0;
    Cycle pcie = 0, compute = 0;
    for (const HostRun &r : m.hostRuns()) {
      const isa::HostOpDecl &h = m.program().hostOps[r.op];
      ops.push_back({{"name", h.name},
                     {"op_type", h.opType},
                     {"bytes_to_host", r.bytesToHost},
                     {"bytes_from_host", r.bytesFromHost},
                     {"pcie_cycles", r.pcieCycles()},
                     {"compute_cycles", r.computeCycles()},
                     {"start_cycle", r.start},
                     {"end_cycle", r.end}});
      toHost += r.bytesToHost;
      fromHost += r.bytesFromHost;
      pcie += r.pcieCycles();
      compute += r.computeCycles();
    }
    j["host"] = {{"ops", ops},
                 {"bytes_to_host", toHost},
                 {"bytes_from_host", fromHost},
                 {"pcie_cycles", pcie},
                 {"compute_cycles", compute},
                 {"total_cycles", pcie + compute},
                 {"share", total > 0 ? static_cast<double>(pcie + compute) /
                                           static_cast<double>(total)
                                     : 0.0}};
  }
  if (m.tracing()) {
    Profile profile = profileOf(m);
    j["ops"] = opsJson(opSummaries(profile));
    if (estimates)
      for (ordered_json &op : j["ops"]) {
        auto it = estimates->find(op["op"].get<std::string>());
        if (it == estimates->end())
          continue;
        const auto span = op["span_cycles"].get<Cycle>();
        op["estimated_cycles"] = it->second;
        op["estimate_ratio"] =
            span > 0 ? static_cast<double>(it->second) /
                           static_cast<double>(span)
                     : 0.0;
      }
    j["critical_path"] = criticalPathJson(criticalPath(profile));
  }
  // Program and op names are bytes from the program file, not always UTF-8.
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

bool TraceFilter::showsCore(int core) const {
  return cores.empty() || std::binary_search(cores.begin(), cores.end(), core);
}

namespace {

[[noreturn]] void usageError(const char *flag, const std::string &message) {
  throw UserError(SourceLoc{flag}, message, ExitCode::Usage);
}

/// A whole decimal number making up all of `text`.
std::optional<uint64_t> parseCount(std::string_view text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return v;
}

} // namespace

void parseTraceWindow(const std::string &text, TraceFilter &filter) {
  const size_t colon = text.find(':');
  std::optional<uint64_t> start, end;
  if (colon != std::string::npos) {
    start = parseCount(std::string_view(text).substr(0, colon));
    end = parseCount(std::string_view(text).substr(colon + 1));
  }
  if (!start || !end)
    usageError("--trace-window",
               "'" + text + "' is not START:END in cycles (e.g. 0:5000)");
  if (*end <= *start)
    usageError("--trace-window", "'" + text + "': END must be after START");
  filter.start = *start;
  filter.end = *end;
}

TraceFilter traceFilterOf(bool tracing, const std::string &window,
                          const std::string &cores, int numCores) {
  TraceFilter filter;
  if (!tracing && !(window.empty() && cores.empty()))
    usageError(window.empty() ? "--trace-cores" : "--trace-window",
               "limits what --trace writes, but no --trace is given");
  if (!window.empty())
    parseTraceWindow(window, filter);
  if (!cores.empty())
    parseTraceCores(cores, numCores, filter);
  return filter;
}

void parseTraceCores(const std::string &text, int numCores, TraceFilter &filter) {
  std::vector<int> cores;
  std::string_view rest = text;
  while (true) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    const size_t dash = item.find('-');
    std::optional<uint64_t> lo = parseCount(item.substr(0, dash));
    std::optional<uint64_t> hi =
        dash == std::string_view::npos ? lo : parseCount(item.substr(dash + 1));
    if (!lo || !hi || *hi < *lo)
      usageError("--trace-cores", "'" + std::string(item) +
                                      "' is not a core or a range of cores "
                                      "(e.g. 0,2-5)");
    if (*hi >= static_cast<uint64_t>(numCores))
      usageError("--trace-cores", "core " + std::to_string(*hi) +
                                      " does not exist (the config has " +
                                      std::to_string(numCores) + " cores)");
    for (uint64_t c = *lo; c <= *hi; ++c)
      cores.push_back(static_cast<int>(c));
    if (comma == std::string_view::npos)
      break;
    rest = rest.substr(comma + 1);
  }
  std::sort(cores.begin(), cores.end());
  cores.erase(std::unique(cores.begin(), cores.end()), cores.end());
  filter.cores = std::move(cores);
}

Profile profileOf(const Machine &m) {
  const hw::HwConfig &cfg = m.config();
  Profile p;
  p.program = m.program().name;
  p.totalCycles = m.totalCycles();
  p.clockGhz = cfg.chip.clockGhz;
  p.peakMacsPerCyclePerCore = peakMacsPerCyclePerCore(cfg);
  p.memoryPeakGbps = m.timing().memory().peakGBps();
  for (int s = 0; s < m.numStreams(); ++s) {
    const isa::Stream &code = m.streamCode(s);
    p.streams.push_back({code.core, isa::engineUnitName(code.engine, code.unit)});
  }
  // Interned once per (stream, instruction) rather than per execution.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> names(
      static_cast<size_t>(m.numStreams()));
  p.records.reserve(m.trace().size());
  for (const TraceSlice &t : m.trace()) {
    const isa::Stream &code = m.streamCode(static_cast<int>(t.stream));
    auto &cache = names[t.stream];
    if (cache.empty()) {
      cache.resize(code.code.size());
      for (size_t i = 0; i < code.code.size(); ++i) {
        const std::string *op = m.program().provenanceOf(code, i);
        cache[i] = {p.intern(code.code[i].desc().mnemonic),
                    op ? p.intern(*op) : kNoName};
      }
    }
    InstrRecord r;
    r.stream = t.stream;
    r.index = t.instr;
    r.mnemonic = cache[t.instr].first;
    r.op = cache[t.instr].second;
    r.start = t.start;
    r.end = t.end;
    r.ready = t.ready;
    r.releasedBy = t.releasedBy;
    r.edge = t.edge;
    r.busy = t.busy;
    r.stall = t.stalls();
    r.bytes = t.bytes;
    const isa::Opcode op = code.code[t.instr].opcode;
    if (op == isa::Opcode::Mm || op == isa::Opcode::Mmi8)
      r.macs = t.work;
    else
      r.sticks = t.work;
    p.records.push_back(r);
  }
  return p;
}

namespace {

/// Writes the trace's events with the number formats Perfetto imports
/// exactly (see traceJson).
class TraceWriter {
public:
  explicit TraceWriter(double clockGhz) : ghz_(clockGhz) {}

  /// Whole nanoseconds of a cycle: Perfetto turns microsecond timestamps
  /// into whole nanoseconds, rounding ts and dur separately. Rounding each
  /// end to whole nanoseconds first and printing exact three-decimal
  /// microseconds makes slices that meet in cycles meet in the viewer.
  uint64_t ns(Cycle c) const {
    return static_cast<uint64_t>(std::llround(static_cast<double>(c) / ghz_));
  }
  static std::string usText(uint64_t nanos) {
    return fmt::format("{}.{:03d}", nanos / 1000, nanos % 1000);
  }
  std::string us(Cycle c) const { return usText(ns(c)); }
  std::string durUs(Cycle start, Cycle end) const { return usText(ns(end) - ns(start)); }

  void emit(const std::string &event) {
    if (!out_.empty())
      out_ += ",\n";
    out_ += event;
  }
  /// A counter sample; samples of one track that land on the same
  /// nanosecond keep the last value, so a track's timestamps increase.
  void counter(int64_t pid, const std::string &name, Cycle at,
               const std::string &argsJson) {
    CounterKey key{pid, name};
    const uint64_t t = ns(at);
    if (key == lastKey_ && t == lastNs_)
      out_.resize(lastEnd_); // replaces the sample just written
    lastEnd_ = out_.size();
    emit(fmt::format("{{\"ph\":\"C\",\"name\":{},\"pid\":{},\"ts\":{},\"args\":{}}}",
                     str(name), pid, usText(t), argsJson));
    lastKey_ = std::move(key);
    lastNs_ = t;
  }
  static std::string str(const std::string &s) {
    return nlohmann::ordered_json(s).dump(-1, ' ', false,
                                          nlohmann::ordered_json::error_handler_t::replace);
  }
  std::string take() { return std::move(out_); }

private:
  using CounterKey = std::pair<int64_t, std::string>;
  double ghz_;
  std::string out_;
  /// The last counter sample written: its track, nanosecond, and where the
  /// text stood before it (samples of one track are written together).
  CounterKey lastKey_{-1, ""};
  uint64_t lastNs_ = 0;
  size_t lastEnd_ = 0;
};

/// `[0x1000, 0x2000)`: the byte range of sticks [lo, hi].
std::string byteRange(int64_t lo, int64_t hi) {
  return fmt::format("\"[{}, {})\"", isa::hexText(lo * isa::kStickBytes),
                     isa::hexText((hi + 1) * isa::kStickBytes));
}

std::string sliceArgs(const Machine &m, size_t seq, const std::string &op) {
  const TraceSlice &t = m.trace()[seq];
  const isa::Stream &code = m.streamCode(static_cast<int>(t.stream));
  const isa::Instr &in = code.code[t.instr];
  std::string a = fmt::format("\"instr\":{},\"index\":{},\"op\":{}",
                              TraceWriter::str(isa::formatInstr(in)), t.instr,
                              TraceWriter::str(op));
  a += fmt::format(",\"seq\":{},\"start_cycle\":{},\"end_cycle\":{}",
                   seq, t.start, t.end);
  if (t.edge != ReleaseEdge::None)
    a += fmt::format(",\"ready_cycle\":{},\"released_by\":{},\"edge\":\"{}\"", t.ready,
                     t.releasedBy, releaseEdgeName(t.edge));
  a += fmt::format(",\"busy\":{}", t.busy);
  std::string stalls;
  const StallCycles stall = t.stalls();
  for (int r = 0; r < kNumStallReasons; ++r)
    if (Cycle c = stall[static_cast<size_t>(r)]; c > 0)
      stalls += fmt::format("{}\"{}\":{}", stalls.empty() ? "" : ",",
                            stallReasonName(static_cast<StallReason>(r)), c);
  if (!stalls.empty())
    a += ",\"stall\":{" + stalls + "}";
  if (t.lxReadLo >= 0)
    a += ",\"lx_read\":" + byteRange(t.lxReadLo, t.lxReadHi);
  if (t.lxWriteLo >= 0)
    a += ",\"lx_write\":" + byteRange(t.lxWriteLo, t.lxWriteHi);
  if (t.memLo >= 0)
    a += std::string(in.opcode == isa::Opcode::St ? ",\"mem_write\":" : ",\"mem_read\":") +
         byteRange(t.memLo, t.memHi);
  const isa::InstrDesc &d = in.desc();
  if (d.runsOn(isa::Engine::DmaLoad) || d.runsOn(isa::Engine::DmaStore) ||
      d.runsOn(isa::Engine::Ring))
    if (t.memLo >= 0 || t.bytes > 0)
      a += fmt::format(",\"bytes\":{}", t.bytes);
  if (in.opcode == isa::Opcode::Mm || in.opcode == isa::Opcode::Mmi8)
    a += fmt::format(",\"macs\":{}", t.work);
  else if (t.work > 0)
    a += fmt::format(",\"sticks\":{}", t.work);
  return a;
}

} // namespace

std::string traceJson(const Machine &m, const TraceFilter &filter) {
  const hw::HwConfig &cfg = m.config();
  const double ghz = cfg.chip.clockGhz;
  const int chipPid = cfg.chip.cores; // after every core id
  TraceWriter w(ghz);
  const SliceLog &slices = m.trace();
  const Cycle total = m.totalCycles();
  const Cycle winStart = std::min(filter.start, total);
  const Cycle winEnd = std::min(filter.end, total);

  // Names: the chip first, then one process per core, one thread per stream.
  w.emit(fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},"
                     "\"args\":{{\"name\":\"chip\"}}}}",
                     chipPid));
  w.emit(fmt::format("{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},"
                     "\"args\":{{\"sort_index\":-1}}}}",
                     chipPid));
  std::vector<bool> namedCore(static_cast<size_t>(cfg.chip.cores), false);
  for (int s = 0; s < m.numStreams(); ++s) {
    const isa::Stream &code = m.streamCode(s);
    if (!filter.showsCore(code.core))
      continue;
    if (!namedCore[static_cast<size_t>(code.core)]) {
      namedCore[static_cast<size_t>(code.core)] = true;
      w.emit(fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},"
                         "\"args\":{{\"name\":\"core {}\"}}}}",
                         code.core, code.core));
      w.emit(fmt::format("{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},"
                         "\"args\":{{\"sort_index\":{}}}}}",
                         code.core, code.core));
    }
    w.emit(fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},"
                       "\"args\":{{\"name\":{}}}}}",
                       code.core, s,
                       TraceWriter::str(isa::engineUnitName(code.engine, code.unit))));
  }

  // Slices.
  std::vector<bool> shown(slices.size(), false);
  for (size_t i = 0; i < slices.size(); ++i) {
    const TraceSlice &t = slices[i];
    const isa::Stream &code = m.streamCode(static_cast<int>(t.stream));
    const bool inWindow = t.start == t.end
                              ? t.start >= filter.start && t.start < filter.end
                              : t.start < filter.end && t.end > filter.start;
    if (!inWindow || !filter.showsCore(code.core))
      continue;
    shown[i] = true;
    const std::string *op = m.program().provenanceOf(code, t.instr);
    w.emit(fmt::format(
        "{{\"ph\":\"X\",\"name\":{},\"cat\":{},\"pid\":{},\"tid\":{},\"ts\":{},"
        "\"dur\":{},\"args\":{{{}}}}}",
        TraceWriter::str(std::string(code.code[t.instr].desc().mnemonic)),
        TraceWriter::str(std::string(isa::engineName(code.engine))), code.core,
        t.stream, w.us(t.start), w.durUs(t.start, t.end),
        sliceArgs(m, i, op ? *op : std::string())));
  }

  // Host fallback ops: a `host` process after the chip, with the PCIe link
  // and the host CPU as tracks; each op is three slices named after it.
  if (!m.hostRuns().empty()) {
    const int hostPid = chipPid + 1;
    w.emit(fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},"
                       "\"args\":{{\"name\":\"host\"}}}}",
                       hostPid));
    w.emit(fmt::format("{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},"
                       "\"args\":{{\"sort_index\":{}}}}}",
                       hostPid, hostPid));
    for (int tid = 0; tid < 2; ++tid)
      w.emit(fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},"
                         "\"tid\":{},\"args\":{{\"name\":\"{}\"}}}}",
                         hostPid, tid, tid == 0 ? "pcie" : "cpu"));
    for (const HostRun &r : m.hostRuns()) {
      const isa::HostOpDecl &h = m.program().hostOps[r.op];
      auto part = [&](int tid, const char *what, Cycle from, Cycle to,
                      uint64_t bytes) {
        if (from >= filter.end || to <= filter.start)
          return;
        w.emit(fmt::format(
            "{{\"ph\":\"X\",\"name\":{},\"cat\":\"host\",\"pid\":{},"
            "\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{\"op\":{},"
            "\"op_type\":{},\"part\":\"{}\",\"bytes\":{},\"cycles\":{}}}}}",
            TraceWriter::str(h.name), hostPid, tid, w.us(from),
            w.durUs(from, to), TraceWriter::str(h.name),
            TraceWriter::str(h.opType), what, bytes, to - from));
      };
      part(0, "to host", r.start, r.toHostEnd, r.bytesToHost);
      part(1, "compute", r.toHostEnd, r.computeEnd, 0);
      part(0, "from host", r.computeEnd, r.end, r.bytesFromHost);
    }
  }

  // Flows: sync edges that released a wait or barrier, and send -> receive.
  uint64_t flowId = 0;
  auto flow = [&](const char *cat, std::string_view name, size_t from, size_t to,
                  Cycle fromAt, Cycle toAt) {
    const TraceSlice &a = slices[from], &b = slices[to];
    ++flowId;
    w.emit(fmt::format("{{\"ph\":\"s\",\"name\":\"{}\",\"cat\":\"{}\",\"id\":{},"
                       "\"pid\":{},\"tid\":{},\"ts\":{}}}",
                       name, cat, flowId, m.streamCode(static_cast<int>(a.stream)).core,
                       a.stream, w.us(fromAt)));
    w.emit(fmt::format("{{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"{}\",\"cat\":\"{}\","
                       "\"id\":{},\"pid\":{},\"tid\":{},\"ts\":{}}}",
                       name, cat, flowId, m.streamCode(static_cast<int>(b.stream)).core,
                       b.stream, w.us(toAt)));
  };
  for (size_t i = 0; i < slices.size(); ++i) {
    const TraceSlice &t = slices[i];
    if (!shown[i])
      continue;
    if ((t.edge == ReleaseEdge::Signal || t.edge == ReleaseEdge::Barrier) &&
        t.releasedBy >= 0 && shown[static_cast<size_t>(t.releasedBy)]) {
      const auto by = static_cast<size_t>(t.releasedBy);
      flow("sync", releaseEdgeName(t.edge), by, i, slices[by].start, t.ready);
    }
    if (t.partner >= 0 && shown[static_cast<size_t>(t.partner)]) {
      const auto send = static_cast<size_t>(t.partner);
      const Cycle at = std::max(slices[send].start, t.start);
      flow("ring", "transfer", send, i, at, at);
    }
  }

  // Counters, one sample per window of kCounterWindowCycles (clipped to the
  // shown cycles) and a closing zero at the end.
  auto rateSamples = [&](int64_t pid, const std::string &name,
                         const std::vector<std::pair<std::string, const WindowCounter *>> &series,
                         double scale) {
    size_t windows = 0;
    for (const auto &[key, c] : series)
      windows = std::max(windows, c->sums().size());
    if (windows == 0 || winStart >= winEnd)
      return;
    for (size_t k = 0; k < windows; ++k) {
      const Cycle lo = k * kCounterWindowCycles, hi = lo + kCounterWindowCycles;
      if (hi <= winStart || lo >= winEnd)
        continue;
      std::string args;
      for (const auto &[key, c] : series) {
        uint64_t v = k < c->sums().size() ? c->sums()[k] : 0;
        args += fmt::format("{}\"{}\":{:.6g}", args.empty() ? "" : ",", key,
                            static_cast<double>(v) * scale);
      }
      w.counter(pid, name, std::max(lo, winStart), "{" + args + "}");
    }
    std::string zeros;
    for (const auto &[key, c] : series)
      zeros += fmt::format("{}\"{}\":0", zeros.empty() ? "" : ",", key);
    w.counter(pid, name, std::min(windows * kCounterWindowCycles, winEnd),
              "{" + zeros + "}");
  };
  const ActivityCounters &act = m.activity();
  // Bytes per window of cycles -> GB/s: bytes / (window / clock_ghz ns).
  const double gbps = ghz / static_cast<double>(kCounterWindowCycles);
  rateSamples(chipPid, "device memory GB/s",
              {{"read", &act.memoryRead}, {"write", &act.memoryWrite}}, gbps);
  auto ringUse = [&](const std::string &name, const Ring &ring,
                     const std::array<WindowCounter, 2> &c) {
    // Link-cycles per window over every link of one direction.
    rateSamples(chipPid, name, {{"increasing", &c[0]}, {"decreasing", &c[1]}},
                1.0 / (static_cast<double>(ring.positions()) *
                       static_cast<double>(kCounterWindowCycles)));
  };
  ringUse("data ring link use", m.timing().dataRing(), act.dataRing);
  ringUse("reduce ring link use", m.timing().reduceRing(), act.reduceRing);

  // LX written per core: a step at each cycle new sticks were first written.
  for (size_t core = 0; core < act.lxFirstWrite.size(); ++core) {
    const std::vector<Cycle> &first = act.lxFirstWrite[core];
    if (first.empty() || !filter.showsCore(static_cast<int>(core)) || winStart >= winEnd)
      continue;
    std::vector<Cycle> times;
    for (Cycle c : first)
      if (c != ActivityCounters::kNever)
        times.push_back(c);
    std::sort(times.begin(), times.end());
    uint64_t before = 0;
    while (before < times.size() && times[before] < winStart)
      ++before;
    w.counter(static_cast<int64_t>(core), "lx written bytes", winStart,
              fmt::format("{{\"bytes\":{}}}", before * isa::kStickBytes));
    for (size_t k = before; k < times.size() && times[k] < winEnd; ++k)
      if (k + 1 == times.size() || times[k + 1] != times[k])
        w.counter(static_cast<int64_t>(core), "lx written bytes", times[k],
                  fmt::format("{{\"bytes\":{}}}", (k + 1) * isa::kStickBytes));
  }

  for (const Finding &f : m.findings()) {
    if (f.cycle < filter.start || f.cycle >= filter.end ||
        (f.core >= 0 && !filter.showsCore(f.core)))
      continue;
    w.emit(fmt::format("{{\"ph\":\"i\",\"s\":\"g\",\"name\":{},\"pid\":{},"
                       "\"ts\":{},\"args\":{{\"message\":{}}}}}",
                       TraceWriter::str(std::string(findingKindName(f.kind))),
                       chipPid, w.us(f.cycle), TraceWriter::str(f.str())));
  }

  std::string out = fmt::format(
      "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"program\":{},"
      "\"total_cycles\":{},\"clock_ghz\":{},\"peak_macs_per_cycle_per_core\":{},"
      "\"memory_peak_gbps\":{},\"counter_window_cycles\":{},\"complete\":{}}},"
      "\"traceEvents\":[\n",
      TraceWriter::str(m.program().name), total, nlohmann::json(ghz).dump(),
      nlohmann::json(peakMacsPerCyclePerCore(cfg)).dump(),
      nlohmann::json(m.timing().memory().peakGBps()).dump(), kCounterWindowCycles,
      filter.everything() ? "true" : "false");
  out += w.take();
  out += "\n]}\n";
  return out;
}

std::string summaryText(const Machine &m) {
  const double ghz = m.config().chip.clockGhz;
  std::string out;
  out += fmt::format("program      {}\n", m.program().name.empty()
                                              ? std::string("(unnamed)")
                                              : m.program().name);
  out += fmt::format("cycles       {}\n", m.totalCycles());
  out += fmt::format("simulated    {:.3f} us at {} GHz\n",
                     cyclesToUs(m.totalCycles(), ghz), ghz);
  out += fmt::format("instructions {}\n", m.instructionsExecuted());
  out += fmt::format("device mem   {} bytes read, {} bytes written\n",
                     m.deviceReadBytes(), m.deviceWriteBytes());
  if (m.macOps() > 0)
    out += fmt::format("MACs         {}\n", m.macOps());
  out += fmt::format("findings     {}\n", m.findings().size() + m.findingsDropped());
  for (const Finding &f : m.findings())
    out += "  " + f.str() + "\n";
  return out;
}

} // namespace spyre::sim
