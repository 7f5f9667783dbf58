// The run's statistics and trace (RunOutput.h).
#include "sim/output/RunOutput.h"

#include "sim/analysis/Summary.h"
#include "support/ByteSink.h"
#include "support/Diagnostic.h"
#include "support/Hash.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/compile.h>
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
    const MachineRecords records(m);
    j["ops"] = opsJson(opSummaries(records.profile(), records));
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
    j["critical_path"] =
        criticalPathJson(criticalPath(records.profile(), records));
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

MachineRecords::MachineRecords(const Machine &m) : machine_(m) {
  const hw::HwConfig &cfg = m.config();
  Profile &p = profile_;
  p.program = m.program().name;
  p.totalCycles = m.totalCycles();
  p.clockGhz = cfg.chip.clockGhz;
  p.peakMacsPerCyclePerCore = peakMacsPerCyclePerCore(cfg);
  p.memoryPeakGbps = m.timing().memory().peakGBps();
  names_.resize(static_cast<size_t>(m.numStreams()));
  for (int s = 0; s < m.numStreams(); ++s) {
    const isa::Stream &code = m.streamCode(s);
    p.streams.push_back({code.core, isa::engineUnitName(code.engine, code.unit)});
    std::vector<Names> &names = names_[static_cast<size_t>(s)];
    names.resize(code.code.size());
    for (size_t i = 0; i < code.code.size(); ++i) {
      const std::string *op = m.program().provenanceOf(code, i);
      const isa::Opcode opcode = code.code[i].opcode;
      names[i] = {p.intern(code.code[i].desc().mnemonic),
                  op ? p.intern(*op) : kNoName,
                  opcode == isa::Opcode::Mm || opcode == isa::Opcode::Mmi8};
    }
  }
}

size_t MachineRecords::size() const { return machine_.trace().size(); }

void MachineRecords::read(size_t first, std::span<RecordView> out) const {
  const SliceLog &log = machine_.trace();
  SPYRE_ASSERT(first + out.size() <= log.size(),
               "records read past the end of the run's log");
  for (size_t i = 0; i < out.size(); ++i) {
    const TraceSlice &t = log[first + i];
    const Names &names = namesOf(t);
    RecordView &v = out[i];
    v.stream = t.stream;
    v.mnemonic = names.mnemonic;
    v.op = names.op;
    v.start = t.start;
    v.end = t.end;
    v.ready = t.ready;
    v.busy = t.busy;
    Cycle bandwidth = 0;
    for (int k = 0; k < t.stallCount; ++k) {
      const StallReason why = t.stallReason[static_cast<size_t>(k)];
      if (why == StallReason::Memory || why == StallReason::Ring ||
          why == StallReason::DmaSlots)
        bandwidth += t.stallCycles[static_cast<size_t>(k)];
    }
    v.bandwidthStall = bandwidth;
    v.releasedBy = t.releasedBy;
    v.edge = t.edge;
    v.bytes = t.bytes;
    v.macs = names.macs ? t.work : 0;
    v.sticks = names.macs ? 0 : t.work;
  }
}

Profile profileOf(const Machine &m) {
  const MachineRecords source(m);
  Profile p = source.profile();
  p.records.reserve(m.trace().size());
  for (const TraceSlice &t : m.trace()) {
    const MachineRecords::Names &names = source.namesOf(t);
    InstrRecord r;
    r.stream = t.stream;
    r.index = t.instr;
    r.mnemonic = names.mnemonic;
    r.op = names.op;
    r.start = t.start;
    r.end = t.end;
    r.ready = t.ready;
    r.releasedBy = t.releasedBy;
    r.edge = t.edge;
    r.busy = t.busy;
    r.stall = t.stalls();
    r.bytes = t.bytes;
    (names.macs ? r.macs : r.sticks) = t.work;
    p.records.push_back(r);
  }
  return p;
}

namespace {

/// Whole nanoseconds printed as microseconds with three decimals.
struct Micros {
  uint64_t ns;
};

} // namespace
} // namespace spyre::sim

template <> struct fmt::formatter<spyre::sim::Micros> {
  constexpr auto parse(format_parse_context &ctx) { return ctx.begin(); }
  template <typename Context>
  auto format(const spyre::sim::Micros &t, Context &ctx) const {
    return fmt::format_to(ctx.out(), FMT_COMPILE("{}.{:03d}"), t.ns / 1000,
                          t.ns % 1000);
  }
};

namespace spyre::sim {

namespace {

/// Writes the trace's events with the number formats Perfetto imports
/// exactly (see writeTraceJson), into a buffer handed to the sink whenever
/// it holds a piece's worth.
class TraceWriter {
public:
  static constexpr size_t kPieceBytes = size_t{1} << 20;

  TraceWriter(double clockGhz, ByteSink &out) : ghz_(clockGhz), out_(out) {
    buf_.reserve(kPieceBytes + (kPieceBytes >> 2));
  }

  /// Whole nanoseconds of a cycle: Perfetto turns microsecond timestamps
  /// into whole nanoseconds, rounding ts and dur separately. Rounding each
  /// end to whole nanoseconds first and printing exact three-decimal
  /// microseconds makes slices that meet in cycles meet in the viewer.
  uint64_t ns(Cycle c) const {
    return static_cast<uint64_t>(std::llround(static_cast<double>(c) / ghz_));
  }
  Micros us(Cycle c) const { return {ns(c)}; }
  Micros durUs(Cycle start, Cycle end) const { return {ns(end) - ns(start)}; }

  /// The text before the events.
  void header(std::string_view text) {
    SPYRE_ASSERT(!anyEvent_ && pending_.size() == 0,
                 "the trace header after an event");
    buf_.append(text);
  }
  /// Starts an event: what to append it to. endEvent() closes it.
  fmt::memory_buffer &beginEvent() {
    writePending();
    separate();
    return buf_;
  }
  void endEvent() { spill(); }
  /// An event from a format compiled with FMT_COMPILE.
  template <typename Format, typename... Args>
  void emit(const Format &format, Args &&...args) {
    fmt::format_to(fmt::appender(beginEvent()), format,
                   std::forward<Args>(args)...);
    endEvent();
  }
  /// A counter sample; samples of one track that land on the same
  /// nanosecond keep the last value, so a track's timestamps increase. The
  /// last sample waits until the next event shows it is not replaced.
  void counter(int64_t pid, const std::string &name, Cycle at,
               std::string_view argsJson) {
    const uint64_t t = ns(at);
    const bool replaces = pending_.size() > 0 && pid == pendingPid_ &&
                          name == pendingName_ && t == pendingNs_;
    if (!replaces)
      writePending();
    pending_.clear();
    fmt::format_to(
        fmt::appender(pending_),
        FMT_COMPILE(
            "{{\"ph\":\"C\",\"name\":{},\"pid\":{},\"ts\":{},\"args\":{}}}"),
        str(name), pid, Micros{t}, argsJson);
    pendingPid_ = pid;
    pendingName_ = name;
    pendingNs_ = t;
  }
  /// Writes the last counter sample and `tail`, and hands everything
  /// buffered to the sink.
  void finish(std::string_view tail) {
    writePending();
    buf_.append(tail);
    out_.write(std::string_view(buf_.data(), buf_.size()));
    buf_.clear();
  }
  static std::string str(std::string_view s) {
    return nlohmann::ordered_json(s).dump(
        -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }

private:
  void separate() {
    if (anyEvent_)
      buf_.append(std::string_view(",\n"));
    anyEvent_ = true;
  }
  void writePending() {
    if (pending_.size() == 0)
      return;
    separate();
    buf_.append(pending_);
    pending_.clear();
    spill();
  }
  /// Hands the buffer to the sink once it holds a piece (between events).
  void spill() {
    if (buf_.size() < kPieceBytes)
      return;
    out_.write(std::string_view(buf_.data(), buf_.size()));
    buf_.clear();
  }

  double ghz_;
  ByteSink &out_;
  fmt::memory_buffer buf_;
  bool anyEvent_ = false;
  /// The counter sample not yet written (empty when none) and its track
  /// and nanosecond.
  fmt::memory_buffer pending_;
  int64_t pendingPid_ = -1;
  std::string pendingName_;
  uint64_t pendingNs_ = 0;
};

/// The JSON strings of a stream's slices, escaped once per instruction
/// rather than once per execution.
struct StreamText {
  struct Instr {
    std::string mnemonic, text, op;
  };
  std::string category;
  std::vector<Instr> instrs; ///< empty until the stream's first slice
};

const StreamText::Instr &instrText(const Machine &m,
                                   std::vector<StreamText> &texts,
                                   uint32_t stream, uint32_t index) {
  StreamText &st = texts[stream];
  if (st.instrs.empty()) {
    const isa::Stream &code = m.streamCode(static_cast<int>(stream));
    st.category = TraceWriter::str(isa::engineName(code.engine));
    st.instrs.reserve(code.code.size());
    for (size_t i = 0; i < code.code.size(); ++i) {
      const isa::Instr &in = code.code[i];
      const std::string *op = m.program().provenanceOf(code, i);
      st.instrs.push_back({TraceWriter::str(in.desc().mnemonic),
                           TraceWriter::str(isa::formatInstr(in)),
                           TraceWriter::str(op ? std::string_view(*op) : "")});
    }
  }
  return st.instrs[index];
}

/// `"[0x1000, 0x2000)"`: the byte range of sticks [lo, hi] (lo >= 0).
void byteRange(fmt::memory_buffer &out, const char *key, int64_t lo,
               int64_t hi) {
  fmt::format_to(fmt::appender(out), FMT_COMPILE(",\"{}\":\"[{:#x}, {:#x})\""),
                 key, lo * isa::kStickBytes, (hi + 1) * isa::kStickBytes);
}

/// A slice's `args` members.
void sliceArgs(fmt::memory_buffer &out, const Machine &m, size_t seq,
               const StreamText::Instr &text) {
  const TraceSlice &t = m.trace()[seq];
  const isa::Stream &code = m.streamCode(static_cast<int>(t.stream));
  const isa::Instr &in = code.code[t.instr];
  auto at = fmt::appender(out);
  fmt::format_to(
      at,
      FMT_COMPILE(
          "\"instr\":{},\"index\":{},\"op\":{},\"seq\":{},\"start_cycle\":{},"
          "\"end_cycle\":{}"),
      text.text, t.instr, text.op, seq, t.start, t.end);
  if (t.edge != ReleaseEdge::None)
    fmt::format_to(
        at,
        FMT_COMPILE(",\"ready_cycle\":{},\"released_by\":{},\"edge\":\"{}\""),
        t.ready, t.releasedBy, releaseEdgeName(t.edge));
  fmt::format_to(at, FMT_COMPILE(",\"busy\":{}"), t.busy);
  const StallCycles stall = t.stalls();
  bool anyStall = false;
  for (int r = 0; r < kNumStallReasons; ++r)
    if (Cycle c = stall[static_cast<size_t>(r)]; c > 0) {
      fmt::format_to(at, FMT_COMPILE("{}\"{}\":{}"),
                     anyStall ? "," : ",\"stall\":{",
                     stallReasonName(static_cast<StallReason>(r)), c);
      anyStall = true;
    }
  if (anyStall)
    out.push_back('}');
  if (t.lxReadLo >= 0)
    byteRange(out, "lx_read", t.lxReadLo, t.lxReadHi);
  if (t.lxWriteLo >= 0)
    byteRange(out, "lx_write", t.lxWriteLo, t.lxWriteHi);
  if (t.memLo >= 0)
    byteRange(out, in.opcode == isa::Opcode::St ? "mem_write" : "mem_read",
              t.memLo, t.memHi);
  const isa::InstrDesc &d = in.desc();
  if (d.runsOn(isa::Engine::DmaLoad) || d.runsOn(isa::Engine::DmaStore) ||
      d.runsOn(isa::Engine::Ring))
    if (t.memLo >= 0 || t.bytes > 0)
      fmt::format_to(at, FMT_COMPILE(",\"bytes\":{}"), t.bytes);
  if (in.opcode == isa::Opcode::Mm || in.opcode == isa::Opcode::Mmi8)
    fmt::format_to(at, FMT_COMPILE(",\"macs\":{}"), t.work);
  else if (t.work > 0)
    fmt::format_to(at, FMT_COMPILE(",\"sticks\":{}"), t.work);
}

} // namespace

void writeTraceJson(const Machine &m, ByteSink &out,
                    const TraceFilter &filter) {
  const hw::HwConfig &cfg = m.config();
  const double ghz = cfg.chip.clockGhz;
  const int chipPid = cfg.chip.cores; // after every core id
  TraceWriter w(ghz, out);
  const SliceLog &slices = m.trace();
  const Cycle total = m.totalCycles();
  const Cycle winStart = std::min(filter.start, total);
  const Cycle winEnd = std::min(filter.end, total);

  w.header(fmt::format(
      "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"program\":{},"
      "\"total_cycles\":{},\"clock_ghz\":{},\"peak_macs_per_cycle_per_core\":{}"
      ","
      "\"memory_peak_gbps\":{},\"counter_window_cycles\":{},\"complete\":{}}},"
      "\"traceEvents\":[\n",
      TraceWriter::str(m.program().name), total, nlohmann::json(ghz).dump(),
      nlohmann::json(peakMacsPerCyclePerCore(cfg)).dump(),
      nlohmann::json(m.timing().memory().peakGBps()).dump(),
      kCounterWindowCycles, filter.everything() ? "true" : "false"));

  // Names: the chip first, then one process per core, one thread per stream.
  w.emit(FMT_COMPILE("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},"
                     "\"args\":{{\"name\":\"chip\"}}}}"),
         chipPid);
  w.emit(
      FMT_COMPILE("{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},"
                  "\"args\":{{\"sort_index\":-1}}}}"),
      chipPid);
  std::vector<bool> namedCore(static_cast<size_t>(cfg.chip.cores), false);
  for (int s = 0; s < m.numStreams(); ++s) {
    const isa::Stream &code = m.streamCode(s);
    if (!filter.showsCore(code.core))
      continue;
    if (!namedCore[static_cast<size_t>(code.core)]) {
      namedCore[static_cast<size_t>(code.core)] = true;
      w.emit(FMT_COMPILE("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},"
                         "\"args\":{{\"name\":\"core {}\"}}}}"),
             code.core, code.core);
      w.emit(FMT_COMPILE(
                 "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},"
                 "\"args\":{{\"sort_index\":{}}}}}"),
             code.core, code.core);
    }
    w.emit(FMT_COMPILE(
               "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},"
               "\"args\":{{\"name\":{}}}}}"),
           code.core, s,
           TraceWriter::str(isa::engineUnitName(code.engine, code.unit)));
  }

  // Slices.
  std::vector<bool> shown(slices.size(), false);
  std::vector<StreamText> texts(static_cast<size_t>(m.numStreams()));
  for (size_t i = 0; i < slices.size(); ++i) {
    const TraceSlice &t = slices[i];
    const isa::Stream &code = m.streamCode(static_cast<int>(t.stream));
    const bool inWindow = t.start == t.end
                              ? t.start >= filter.start && t.start < filter.end
                              : t.start < filter.end && t.end > filter.start;
    if (!inWindow || !filter.showsCore(code.core))
      continue;
    shown[i] = true;
    const StreamText::Instr &text = instrText(m, texts, t.stream, t.instr);
    fmt::memory_buffer &event = w.beginEvent();
    fmt::format_to(
        fmt::appender(event),
        FMT_COMPILE(
            "{{\"ph\":\"X\",\"name\":{},\"cat\":{},\"pid\":{},\"tid\":{},"
            "\"ts\":{},\"dur\":{},\"args\":{{"),
        text.mnemonic, texts[t.stream].category, code.core, t.stream,
        w.us(t.start), w.durUs(t.start, t.end));
    sliceArgs(event, m, i, text);
    event.append(std::string_view("}}"));
    w.endEvent();
  }

  // Host fallback ops: a `host` process after the chip, with the PCIe link
  // and the host CPU as tracks; each op is three slices named after it.
  if (!m.hostRuns().empty()) {
    const int hostPid = chipPid + 1;
    w.emit(FMT_COMPILE("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},"
                       "\"args\":{{\"name\":\"host\"}}}}"),
           hostPid);
    w.emit(
        FMT_COMPILE("{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},"
                    "\"args\":{{\"sort_index\":{}}}}}"),
        hostPid, hostPid);
    for (int tid = 0; tid < 2; ++tid)
      w.emit(FMT_COMPILE("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},"
                         "\"tid\":{},\"args\":{{\"name\":\"{}\"}}}}"),
             hostPid, tid, tid == 0 ? "pcie" : "cpu");
    for (const HostRun &r : m.hostRuns()) {
      const isa::HostOpDecl &h = m.program().hostOps[r.op];
      auto part = [&](int tid, const char *what, Cycle from, Cycle to,
                      uint64_t bytes) {
        if (from >= filter.end || to <= filter.start)
          return;
        w.emit(FMT_COMPILE(
                   "{{\"ph\":\"X\",\"name\":{},\"cat\":\"host\",\"pid\":{},"
                   "\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{\"op\":{},"
                   "\"op_type\":{},\"part\":\"{}\",\"bytes\":{},\"cycles\":{}}}"
                   "}}"),
               TraceWriter::str(h.name), hostPid, tid, w.us(from),
               w.durUs(from, to), TraceWriter::str(h.name),
               TraceWriter::str(h.opType), what, bytes, to - from);
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
    w.emit(
        FMT_COMPILE("{{\"ph\":\"s\",\"name\":\"{}\",\"cat\":\"{}\",\"id\":{},"
                    "\"pid\":{},\"tid\":{},\"ts\":{}}}"),
        name, cat, flowId, m.streamCode(static_cast<int>(a.stream)).core,
        a.stream, w.us(fromAt));
    w.emit(FMT_COMPILE(
               "{{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"{}\",\"cat\":\"{}\","
               "\"id\":{},\"pid\":{},\"tid\":{},\"ts\":{}}}"),
           name, cat, flowId, m.streamCode(static_cast<int>(b.stream)).core,
           b.stream, w.us(toAt));
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
    w.emit(FMT_COMPILE("{{\"ph\":\"i\",\"s\":\"g\",\"name\":{},\"pid\":{},"
                       "\"ts\":{},\"args\":{{\"message\":{}}}}}"),
           TraceWriter::str(findingKindName(f.kind)), chipPid, w.us(f.cycle),
           TraceWriter::str(f.str()));
  }

  w.finish("\n]}\n");
}

std::string traceJson(const Machine &m, const TraceFilter &filter) {
  StringSink out;
  writeTraceJson(m, out, filter);
  return out.take();
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
