// Summaries in and out (Summary.h): the statistics' `ops` and
// `critical_path` arrays, reading a statistics or trace JSON back, the
// terminal text and JSON of `spyre trace summary`, and `spyre trace diff`.
#include "sim/analysis/Summary.h"

#include "support/Diagnostic.h"
#include "support/Nesting.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace spyre::sim {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// ------------------------------------------------------------ JSON reading

/// Typed access to a JSON document with located errors: every problem is a
/// UserError naming the file and the key path.
class JsonReader {
public:
  explicit JsonReader(const std::string &file) : file_(file) {}

  [[noreturn]] void fail(const std::string &path, const std::string &what) const {
    throw UserError(SourceLoc{file_, 0, 0, path}, what);
  }
  const json &member(const json &obj, const char *key, const std::string &path) const {
    if (!obj.is_object() || !obj.contains(key))
      fail(path, std::string("missing '") + key + "'");
    return obj[key];
  }
  const json &array(const json &obj, const char *key, const std::string &path) const {
    const json &v = member(obj, key, path);
    if (!v.is_array())
      fail(join(path, key), "must be an array");
    return v;
  }
  uint64_t u64(const json &obj, const char *key, const std::string &path) const {
    const json &v = member(obj, key, path);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      fail(join(path, key), "must be a non-negative integer");
    return v.get<uint64_t>();
  }
  uint64_t u64Or(const json &obj, const char *key, const std::string &path,
                 uint64_t fallback) const {
    return obj.is_object() && obj.contains(key) ? u64(obj, key, path) : fallback;
  }
  int64_t i64(const json &obj, const char *key, const std::string &path) const {
    const json &v = member(obj, key, path);
    if (!v.is_number_integer())
      fail(join(path, key), "must be an integer");
    return v.get<int64_t>();
  }
  double num(const json &obj, const char *key, const std::string &path) const {
    const json &v = member(obj, key, path);
    if (!v.is_number())
      fail(join(path, key), "must be a number");
    return v.get<double>();
  }
  std::string str(const json &obj, const char *key, const std::string &path) const {
    const json &v = member(obj, key, path);
    if (!v.is_string())
      fail(join(path, key), "must be a string");
    return v.get<std::string>();
  }
  std::string strOr(const json &obj, const char *key, const std::string &path) const {
    return obj.is_object() && obj.contains(key) ? str(obj, key, path) : std::string();
  }
  static std::string join(const std::string &path, const std::string &key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string at(const std::string &path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

private:
  const std::string &file_;
};

StallCycles readStalls(const JsonReader &rd, const json &obj,
                       const std::string &path) {
  StallCycles out{};
  if (!obj.is_object())
    rd.fail(path, "must be an object");
  for (const auto &[key, value] : obj.items()) {
    auto reason = parseStallReason(key);
    if (!reason)
      rd.fail(JsonReader::join(path, key), "unknown stall reason");
    out[static_cast<size_t>(*reason)] = rd.u64(obj, key.c_str(), path);
  }
  return out;
}

std::vector<OpSummary> readOps(const JsonReader &rd, const json &ops,
                               const Summary &s) {
  std::vector<OpSummary> out;
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string path = JsonReader::at("ops", i);
    const json &o = ops[i];
    OpSummary op;
    op.op = rd.str(o, "op", path);
    op.first = rd.u64(o, "first_cycle", path);
    op.last = rd.u64(o, "last_cycle", path);
    if (op.last < op.first)
      rd.fail(path, "'last_cycle' is before 'first_cycle'");
    op.instructions = rd.u64(o, "instructions", path);
    const json &busy = rd.member(o, "busy_cycles", path);
    for (size_t k = 0; k < kEngineKinds.size(); ++k)
      op.busy[k] = rd.u64Or(busy, std::string(kEngineKinds[k]).c_str(),
                            JsonReader::join(path, "busy_cycles"), 0);
    op.readBytes = rd.u64(o, "dram_read_bytes", path);
    op.writeBytes = rd.u64(o, "dram_write_bytes", path);
    op.ringBytes = rd.u64(o, "ring_bytes", path);
    op.macs = rd.u64(o, "mac_ops", path);
    op.sticks = rd.u64(o, "sfu_sticks", path);
    op.cores = static_cast<int>(rd.u64(o, "cores", path));
    op.roofline = rooflineOf(op, s.clockGhz, s.peakMacsPerCyclePerCore,
                             s.memoryPeakGbps);
    out.push_back(std::move(op));
  }
  return out;
}

std::vector<PathSegment> readPath(const JsonReader &rd, const json &path) {
  std::vector<PathSegment> out;
  for (size_t i = 0; i < path.size(); ++i) {
    const std::string at = JsonReader::at("critical_path", i);
    const json &j = path[i];
    PathSegment seg;
    std::string kind = rd.str(j, "kind", at);
    if (kind == "run") {
      seg.edge = ReleaseEdge::None;
    } else {
      auto edge = parseReleaseEdge(kind);
      if (!edge || *edge == ReleaseEdge::None)
        rd.fail(JsonReader::join(at, "kind"),
                "'" + kind + "' is not run, signal, transfer or barrier");
      seg.edge = *edge;
    }
    seg.where = rd.str(j, "where", at);
    seg.op = rd.str(j, "op", at);
    seg.what = rd.str(j, "what", at);
    seg.start = rd.u64(j, "start_cycle", at);
    seg.end = rd.u64(j, "end_cycle", at);
    if (seg.end < seg.start)
      rd.fail(at, "'end_cycle' is before 'start_cycle'");
    seg.instructions = rd.u64(j, "instructions", at);
    seg.busy = rd.u64(j, "busy_cycles", at);
    seg.bandwidth = rd.u64(j, "bandwidth_cycles", at);
    out.push_back(std::move(seg));
  }
  return out;
}

Summary summaryFromStats(const json &root, const JsonReader &rd) {
  Summary s;
  s.source = "stats";
  s.program = rd.str(root, "program", "");
  s.totalCycles = rd.u64(root, "total_cycles", "");
  s.clockGhz = rd.num(root, "clock_ghz", "");
  if (!(s.clockGhz > 0))
    rd.fail("clock_ghz", "must be positive");
  s.peakMacsPerCyclePerCore =
      root.contains("peak_macs_per_cycle_per_core")
          ? rd.num(root, "peak_macs_per_cycle_per_core", "")
          : 0.0;
  s.memoryPeakGbps = rd.num(rd.member(root, "memory", ""), "peak_gbps", "memory");
  if (root.contains("host")) {
    const json &h = rd.member(root, "host", "");
    HostSummary hs;
    hs.ops = rd.array(h, "ops", "host").size();
    hs.pcie = rd.u64(h, "pcie_cycles", "host");
    hs.compute = rd.u64(h, "compute_cycles", "host");
    hs.bytesToHost = rd.u64(h, "bytes_to_host", "host");
    hs.bytesFromHost = rd.u64(h, "bytes_from_host", "host");
    s.host = hs;
  }
  const json &cores = rd.array(root, "cores", "");
  for (size_t c = 0; c < cores.size(); ++c) {
    const std::string cpath = JsonReader::at("cores", c);
    const int core = static_cast<int>(rd.i64(cores[c], "core", cpath));
    const json &engines = rd.array(cores[c], "engines", cpath);
    for (size_t e = 0; e < engines.size(); ++e) {
      const std::string epath = JsonReader::at(cpath + ".engines", e);
      EngineSummary es;
      es.core = core;
      es.engine = rd.str(engines[e], "engine", epath);
      es.instructions = rd.u64(engines[e], "instructions", epath);
      es.busy = rd.u64(engines[e], "busy_cycles", epath);
      es.stall = readStalls(rd, rd.member(engines[e], "stall_cycles", epath),
                            JsonReader::join(epath, "stall_cycles"));
      es.idle = rd.u64(engines[e], "idle_cycles", epath);
      s.engines.push_back(std::move(es));
    }
  }
  if (root.contains("ops")) {
    s.ops = readOps(rd, rd.array(root, "ops", ""), s);
    s.hasOps = true;
  }
  if (root.contains("critical_path")) {
    s.criticalPath = readPath(rd, rd.array(root, "critical_path", ""));
    s.hasCriticalPath = true;
  }
  return s;
}

// ------------------------------------------------------------ text output

/// Columns separated by two spaces, each line indented by two; a column is
/// left-aligned when `left` says so (missing entries: right-aligned, except
/// the first column).
std::string table(const std::vector<std::vector<std::string>> &rows,
                  const std::vector<bool> &left = {true}) {
  std::vector<size_t> width;
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c)
        width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::string out;
  for (const auto &row : rows) {
    std::string line = "";
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      const bool l = c < left.size() ? left[c] : false;
      line += "  " + (l ? row[c] + pad : pad + row[c]);
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }

std::string opName(const std::string &op) { return op.empty() ? "(none)" : op; }

std::string engineLabel(const EngineSummary &e) {
  return "core " + std::to_string(e.core) + " " + e.engine;
}

std::string segmentKind(const PathSegment &seg) {
  return seg.edge == ReleaseEdge::None ? "run" : std::string(releaseEdgeName(seg.edge));
}

std::string intensityText(const Roofline &r) {
  if (r.regime == "-")
    return "-";
  if (std::isinf(r.intensity))
    return "inf";
  return fmt::format("{:.2f}", r.intensity);
}

std::string signedText(int64_t v) { return (v > 0 ? "+" : "") + std::to_string(v); }

int64_t delta(uint64_t a, uint64_t b) {
  return static_cast<int64_t>(b) - static_cast<int64_t>(a);
}

std::string deltaPercent(uint64_t a, uint64_t b) {
  if (a == 0)
    return b == 0 ? "0" : "new";
  return fmt::format("{:+.1f}%", 100.0 * static_cast<double>(delta(a, b)) /
                                     static_cast<double>(a));
}

ordered_json engineJson(const EngineSummary &e, Cycle total) {
  ordered_json j;
  j["core"] = e.core;
  j["engine"] = e.engine;
  j["instructions"] = e.instructions;
  j["busy_cycles"] = e.busy;
  ordered_json stalls;
  for (int r = 0; r < kNumStallReasons; ++r)
    stalls[std::string(stallReasonName(static_cast<StallReason>(r)))] =
        e.stall[static_cast<size_t>(r)];
  j["stall_cycles"] = stalls;
  j["idle_cycles"] = e.idle;
  j["total_cycles"] = e.total();
  j["utilization"] =
      total > 0 ? static_cast<double>(e.busy) / static_cast<double>(total) : 0.0;
  return j;
}

std::string dumpJson(const ordered_json &j) {
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

} // namespace

// ------------------------------------------------------- stats fragments

nlohmann::ordered_json opsJson(const std::vector<OpSummary> &ops) {
  ordered_json out = ordered_json::array();
  for (const OpSummary &o : ops) {
    ordered_json j;
    j["op"] = o.op;
    j["first_cycle"] = o.first;
    j["last_cycle"] = o.last;
    j["span_cycles"] = o.span();
    j["instructions"] = o.instructions;
    ordered_json busy;
    for (size_t k = 0; k < kEngineKinds.size(); ++k)
      busy[std::string(kEngineKinds[k])] = o.busy[k];
    j["busy_cycles"] = busy;
    j["dram_read_bytes"] = o.readBytes;
    j["dram_write_bytes"] = o.writeBytes;
    j["ring_bytes"] = o.ringBytes;
    j["mac_ops"] = o.macs;
    j["sfu_sticks"] = o.sticks;
    j["cores"] = o.cores;
    const Roofline &r = o.roofline;
    ordered_json roof;
    roof["regime"] = r.regime;
    if (std::isinf(r.intensity))
      roof["flop_per_byte"] = nullptr;
    else
      roof["flop_per_byte"] = r.intensity;
    roof["unit"] = r.unit;
    roof["bound"] = r.bound;
    roof["achieved"] = r.achieved;
    roof["fraction_of_bound"] = r.fraction;
    j["roofline"] = roof;
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::ordered_json criticalPathJson(const std::vector<PathSegment> &path) {
  ordered_json out = ordered_json::array();
  for (const PathSegment &seg : path) {
    ordered_json j;
    j["kind"] = segmentKind(seg);
    j["where"] = seg.where;
    j["op"] = seg.op;
    j["what"] = seg.what;
    j["start_cycle"] = seg.start;
    j["end_cycle"] = seg.end;
    j["cycles"] = seg.cycles();
    j["instructions"] = seg.instructions;
    j["busy_cycles"] = seg.busy;
    j["bandwidth_cycles"] = seg.bandwidth;
    out.push_back(std::move(j));
  }
  return out;
}

// ------------------------------------------------------------ reading

Profile profileFromTrace(const json &root, const std::string &fileName) {
  JsonReader rd(fileName);
  const json *events = &root;
  Profile p;
  if (root.is_object()) {
    events = &rd.array(root, "traceEvents", "");
    if (!root.contains("otherData"))
      rd.fail("otherData", "missing: not a trace written by spyre sim");
    const json &meta = root["otherData"];
    p.program = rd.str(meta, "program", "otherData");
    p.totalCycles = rd.u64(meta, "total_cycles", "otherData");
    p.clockGhz = rd.num(meta, "clock_ghz", "otherData");
    if (!(p.clockGhz > 0))
      rd.fail("otherData.clock_ghz", "must be positive");
    p.peakMacsPerCyclePerCore =
        rd.num(meta, "peak_macs_per_cycle_per_core", "otherData");
    p.memoryPeakGbps = rd.num(meta, "memory_peak_gbps", "otherData");
    const json &complete = rd.member(meta, "complete", "otherData");
    if (!complete.is_boolean())
      rd.fail("otherData.complete", "must be true or false");
    p.complete = complete.get<bool>();
  } else {
    rd.fail("", "a bare event array has no run figures: not a trace written "
                "by spyre sim");
  }
  // Threads (engine streams) from their names; the tid is the stream index.
  std::map<int64_t, StreamInfo> threads;
  for (size_t i = 0; i < events->size(); ++i) {
    const json &e = (*events)[i];
    if (!e.is_object() || e.value("ph", "") != "M" ||
        e.value("name", "") != "thread_name")
      continue;
    const std::string path = JsonReader::at("traceEvents", i);
    int64_t tid = rd.i64(e, "tid", path);
    if (tid < 0 || tid > 0xFFFF)
      rd.fail(JsonReader::join(path, "tid"), "is not a stream index");
    threads[tid] = {static_cast<int>(rd.i64(e, "pid", path)),
                    rd.str(rd.member(e, "args", path), "name", path + ".args")};
  }
  struct Pending {
    uint64_t seq;
    InstrRecord rec;
    int64_t releasedBySeq;
  };
  std::vector<Pending> pending;
  std::map<int64_t, uint32_t> streamOf; // tid -> index in p.streams
  for (const auto &[tid, info] : threads) {
    streamOf[tid] = static_cast<uint32_t>(p.streams.size());
    p.streams.push_back(info);
  }
  for (size_t i = 0; i < events->size(); ++i) {
    const json &e = (*events)[i];
    if (!e.is_object() || e.value("ph", "") != "X")
      continue;
    const std::string path = JsonReader::at("traceEvents", i);
    const json &args = rd.member(e, "args", path);
    const std::string apath = path + ".args";
    if (!args.is_object() || !args.contains("seq"))
      continue; // not an instruction slice
    const int64_t tid = rd.i64(e, "tid", path);
    auto it = streamOf.find(tid);
    if (it == streamOf.end())
      rd.fail(JsonReader::join(path, "tid"), "has no thread_name metadata");
    Pending pd{rd.u64(args, "seq", apath), {}, -1};
    InstrRecord &r = pd.rec;
    r.stream = it->second;
    r.index = static_cast<uint32_t>(rd.u64(args, "index", apath));
    r.mnemonic = p.intern(rd.str(e, "name", path));
    const std::string op = rd.strOr(args, "op", apath);
    r.op = op.empty() ? kNoName : p.intern(op);
    r.start = rd.u64(args, "start_cycle", apath);
    r.end = rd.u64(args, "end_cycle", apath);
    if (r.end < r.start)
      rd.fail(apath, "'end_cycle' is before 'start_cycle'");
    r.ready = rd.u64Or(args, "ready_cycle", apath, r.start);
    r.busy = rd.u64(args, "busy", apath);
    if (args.contains("stall"))
      r.stall = readStalls(rd, args["stall"], JsonReader::join(apath, "stall"));
    if (args.contains("released_by")) {
      pd.releasedBySeq = static_cast<int64_t>(rd.u64(args, "released_by", apath));
      const std::string edge = rd.str(args, "edge", apath);
      auto kind = parseReleaseEdge(edge);
      if (!kind)
        rd.fail(JsonReader::join(apath, "edge"),
                "'" + edge + "' is not signal, transfer or barrier");
      r.edge = *kind;
    }
    r.bytes = rd.u64Or(args, "bytes", apath, 0);
    r.macs = rd.u64Or(args, "macs", apath, 0);
    r.sticks = rd.u64Or(args, "sticks", apath, 0);
    pending.push_back(std::move(pd));
  }
  // Records in the simulator's order, so ties resolve as they did there.
  std::stable_sort(pending.begin(), pending.end(),
                   [](const Pending &a, const Pending &b) { return a.seq < b.seq; });
  std::map<uint64_t, int64_t> indexOfSeq;
  for (size_t i = 0; i < pending.size(); ++i)
    if (!indexOfSeq.emplace(pending[i].seq, static_cast<int64_t>(i)).second)
      rd.fail("traceEvents", "two slices have seq " +
                                 std::to_string(pending[i].seq));
  for (Pending &pd : pending) {
    if (pd.releasedBySeq >= 0) {
      auto it = indexOfSeq.find(static_cast<uint64_t>(pd.releasedBySeq));
      pd.rec.releasedBy = it == indexOfSeq.end() ? -1 : it->second;
    }
    p.records.push_back(pd.rec);
  }
  return p;
}

/// The host fallback's slices of a trace (category `host`, one per
/// transfer and per compute, docs/sim-output.md); nullopt without any.
std::optional<HostSummary> hostFromTrace(const json &root,
                                         const JsonReader &rd) {
  const json &events = root.is_array() ? root : root.at("traceEvents");
  if (!events.is_array())
    return std::nullopt;
  std::optional<HostSummary> hs;
  for (size_t i = 0; i < events.size(); ++i) {
    const json &e = events[i];
    if (!e.is_object() || e.value("ph", "") != "X" || e.value("cat", "") != "host")
      continue;
    const std::string path = JsonReader::at("traceEvents", i);
    const json &args = rd.member(e, "args", path);
    const std::string apath = path + ".args";
    const std::string part = rd.str(args, "part", apath);
    const uint64_t cycles = rd.u64(args, "cycles", apath);
    const uint64_t bytes = rd.u64Or(args, "bytes", apath, 0);
    if (!hs)
      hs.emplace();
    if (part == "compute") {
      ++hs->ops;
      hs->compute += cycles;
    } else if (part == "to host") {
      hs->pcie += cycles;
      hs->bytesToHost += bytes;
    } else if (part == "from host") {
      hs->pcie += cycles;
      hs->bytesFromHost += bytes;
    } else {
      rd.fail(JsonReader::join(apath, "part"),
              "'" + part + "' is not 'to host', 'compute' or 'from host'");
    }
  }
  return hs;
}

Summary readSummary(std::string_view text, const std::string &fileName) {
  checkJsonDepth(text, fileName);
  json root = json::parse(text.begin(), text.end(), nullptr, false);
  if (root.is_discarded())
    throw UserError(SourceLoc{fileName}, "not valid JSON");
  JsonReader rd(fileName);
  if (root.is_array() || (root.is_object() && root.contains("traceEvents"))) {
    Summary s = summarize(profileFromTrace(root, fileName));
    s.host = hostFromTrace(root, rd);
    return s;
  }
  if (root.is_object() && root.contains("total_cycles") && root.contains("cores"))
    return summaryFromStats(root, rd);
  throw UserError(SourceLoc{fileName},
                  "neither a statistics JSON (spyre sim --stats) nor a trace "
                  "(spyre sim --trace)");
}

// ------------------------------------------------------------ summary

std::string summaryText(const Summary &s, size_t topOps) {
  std::string out;
  out += fmt::format("program   {}\n", s.program.empty() ? "(unnamed)" : s.program);
  out += fmt::format("source    {}{}\n", s.source,
                     s.complete ? "" : " (part of the run: --trace-window or "
                                       "--trace-cores)");
  out += fmt::format("cycles    {} ({:.3f} us at {} GHz)\n", s.totalCycles,
                     static_cast<double>(s.totalCycles) / (s.clockGhz * 1000.0),
                     s.clockGhz);

  if (s.host)
    out += fmt::format(
        "host      {} cycles, {} of the run ({} host op{}: {} PCIe, {} "
        "compute; {} bytes to the host, {} back)\n",
        s.host->total(),
        percent(s.totalCycles ? static_cast<double>(s.host->total()) /
                                    static_cast<double>(s.totalCycles)
                              : 0.0),
        s.host->ops, s.host->ops == 1 ? "" : "s", s.host->pcie,
        s.host->compute, s.host->bytesToHost, s.host->bytesFromHost);

  // Engines: only the stall reasons that occur, in their fixed order.
  std::vector<size_t> reasons;
  for (size_t r = 0; r < kNumStallReasons; ++r)
    for (const EngineSummary &e : s.engines)
      if (e.stall[r] > 0) {
        reasons.push_back(r);
        break;
      }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"engine", "instrs", "busy", "util"};
  for (size_t r : reasons)
    head.push_back(std::string(stallReasonName(static_cast<StallReason>(r))));
  head.insert(head.end(), {"idle", "total"});
  rows.push_back(head);
  for (const EngineSummary &e : s.engines) {
    std::vector<std::string> row = {
        engineLabel(e), std::to_string(e.instructions), std::to_string(e.busy),
        percent(s.totalCycles ? static_cast<double>(e.busy) /
                                    static_cast<double>(s.totalCycles)
                              : 0.0)};
    for (size_t r : reasons)
      row.push_back(std::to_string(e.stall[r]));
    row.push_back(std::to_string(e.idle));
    row.push_back(std::to_string(e.total()));
    rows.push_back(std::move(row));
  }
  out += "\nengines (cycles; busy + stalls + idle = total)\n" + table(rows);

  out += "\ncritical path";
  if (!s.hasCriticalPath) {
    out += ": not in this file (spyre sim writes it with --stats or --trace)\n";
  } else {
    Cycle sum = 0;
    for (const PathSegment &seg : s.criticalPath)
      sum += seg.cycles();
    out += fmt::format(" ({} cycles in {} segment{})\n", sum, s.criticalPath.size(),
                       s.criticalPath.size() == 1 ? "" : "s");
    rows = {{"cycles", "start", "end", "kind", "where", "op", "busy", "bw wait",
             "instructions"}};
    for (const PathSegment &seg : s.criticalPath) {
      bool run = seg.edge == ReleaseEdge::None;
      rows.push_back({std::to_string(seg.cycles()), std::to_string(seg.start),
                      std::to_string(seg.end), segmentKind(seg), seg.where,
                      run && seg.instructions ? opName(seg.op) : "",
                      run && seg.instructions ? std::to_string(seg.busy) : "",
                      run && seg.instructions ? std::to_string(seg.bandwidth) : "",
                      seg.what});
    }
    out += table(rows, {false, false, false, true, true, true, false, false, true});
  }

  if (!s.hasOps) {
    out += "\nops: not in this file (spyre sim writes them with --stats or --trace)\n";
    return out;
  }
  const size_t shown = std::min(topOps, s.ops.size());
  out += fmt::format("\nops by time (top {} of {}; busy cycles by engine kind)\n",
                     shown, s.ops.size());
  rows.clear();
  head = {"op", "span", "instrs"};
  for (std::string_view k : kEngineKinds)
    head.emplace_back(k);
  head.insert(head.end(), {"read B", "write B", "ring B", "MACs", "sticks"});
  rows.push_back(head);
  for (size_t i = 0; i < shown; ++i) {
    const OpSummary &o = s.ops[i];
    std::vector<std::string> row = {opName(o.op), std::to_string(o.span()),
                                    std::to_string(o.instructions)};
    for (Cycle b : o.busy)
      row.push_back(std::to_string(b));
    row.insert(row.end(),
               {std::to_string(o.readBytes), std::to_string(o.writeBytes),
                std::to_string(o.ringBytes), std::to_string(o.macs),
                std::to_string(o.sticks)});
    rows.push_back(std::move(row));
  }
  out += table(rows);

  out += fmt::format("\nroofline (peak {} MAC/cycle per core, memory {} GB/s)\n",
                     s.peakMacsPerCyclePerCore, s.memoryPeakGbps);
  rows = {{"op", "cores", "FLOP/B", "bound", "achieved", "of bound", "regime"}};
  for (size_t i = 0; i < shown; ++i) {
    const OpSummary &o = s.ops[i];
    const Roofline &r = o.roofline;
    if (r.regime == "-") {
      rows.push_back({opName(o.op), std::to_string(o.cores), "-", "-", "-", "-", "-"});
      continue;
    }
    rows.push_back({opName(o.op), std::to_string(o.cores), intensityText(r),
                    fmt::format("{:.2f} {}", r.bound, r.unit),
                    fmt::format("{:.3f} {}", r.achieved, r.unit), percent(r.fraction),
                    r.regime});
  }
  out += table(rows);
  return out;
}

std::string summaryJson(const Summary &s) {
  ordered_json j;
  j["program"] = s.program;
  j["source"] = s.source;
  j["complete"] = s.complete;
  j["total_cycles"] = s.totalCycles;
  j["clock_ghz"] = s.clockGhz;
  j["peak_macs_per_cycle_per_core"] = s.peakMacsPerCyclePerCore;
  j["memory_peak_gbps"] = s.memoryPeakGbps;
  if (s.host)
    j["host"] = {{"ops", s.host->ops},
                 {"pcie_cycles", s.host->pcie},
                 {"compute_cycles", s.host->compute},
                 {"total_cycles", s.host->total()},
                 {"bytes_to_host", s.host->bytesToHost},
                 {"bytes_from_host", s.host->bytesFromHost}};
  ordered_json engines = ordered_json::array();
  for (const EngineSummary &e : s.engines)
    engines.push_back(engineJson(e, s.totalCycles));
  j["engines"] = engines;
  if (s.hasCriticalPath) {
    Cycle sum = 0;
    for (const PathSegment &seg : s.criticalPath)
      sum += seg.cycles();
    j["critical_path_cycles"] = sum;
    j["critical_path"] = criticalPathJson(s.criticalPath);
  }
  if (s.hasOps)
    j["ops"] = opsJson(s.ops);
  return dumpJson(j);
}

// ------------------------------------------------------------ diff

namespace {

struct EngineChange {
  std::string label;
  const EngineSummary *a = nullptr;
  const EngineSummary *b = nullptr;
  int64_t busyDelta = 0;
  int64_t stallDelta = 0;
  /// Waiting for memory, ring links or DMA slots: time the engine spent on
  /// its own work, unlike waiting for other streams.
  int64_t bandwidthDelta = 0;
};

struct OpChange {
  std::string op;
  const OpSummary *a = nullptr;
  const OpSummary *b = nullptr;
  int64_t spanDelta = 0;
  std::array<int64_t, kEngineKinds.size()> busyDelta{};
};

struct Diff {
  std::vector<EngineChange> engines; ///< every engine of either run
  std::vector<OpChange> ops;         ///< every op of either run
  const EngineChange *topEngine = nullptr;
  const OpChange *topOp = nullptr;
};

const EngineSummary kNoEngine{};

Cycle bandwidthOf(const EngineSummary &e) {
  return e.stall[static_cast<size_t>(StallReason::Memory)] +
         e.stall[static_cast<size_t>(StallReason::Ring)] +
         e.stall[static_cast<size_t>(StallReason::DmaSlots)];
}
const OpSummary kNoOp{};

Diff computeDiff(const Summary &a, const Summary &b) {
  Diff d;
  std::map<std::pair<int, std::string>, EngineChange> engines;
  for (const EngineSummary &e : a.engines)
    engines[{e.core, e.engine}].a = &e;
  for (const EngineSummary &e : b.engines)
    engines[{e.core, e.engine}].b = &e;
  for (auto &[key, c] : engines) {
    c.label = "core " + std::to_string(key.first) + " " + key.second;
    const EngineSummary &ea = c.a ? *c.a : kNoEngine, &eb = c.b ? *c.b : kNoEngine;
    c.busyDelta = delta(ea.busy, eb.busy);
    c.stallDelta = delta(ea.stalled(), eb.stalled());
    c.bandwidthDelta = delta(bandwidthOf(ea), bandwidthOf(eb));
    d.engines.push_back(c);
  }
  std::map<std::string, OpChange> ops;
  for (const OpSummary &o : a.ops)
    ops[o.op].a = &o;
  for (const OpSummary &o : b.ops)
    ops[o.op].b = &o;
  for (auto &[name, c] : ops) {
    c.op = name;
    const OpSummary &oa = c.a ? *c.a : kNoOp, &ob = c.b ? *c.b : kNoOp;
    c.spanDelta = delta(oa.span(), ob.span());
    for (size_t k = 0; k < kEngineKinds.size(); ++k)
      c.busyDelta[k] = delta(oa.busy[k], ob.busy[k]);
    d.ops.push_back(c);
  }
  // The largest change in absolute cycles; the first in order on a tie. An
  // engine's own time is busy plus waiting for bandwidth: waiting for other
  // streams follows from their changes and would name the wrong engine.
  auto absv = [](int64_t v) { return v < 0 ? -v : v; };
  auto own = [&](const EngineChange &c) {
    return absv(c.busyDelta + c.bandwidthDelta);
  };
  for (const EngineChange &c : d.engines)
    if (own(c) > 0 && (!d.topEngine || own(c) > own(*d.topEngine)))
      d.topEngine = &c;
  for (const OpChange &c : d.ops)
    if (c.spanDelta != 0 && (!d.topOp || absv(c.spanDelta) > absv(d.topOp->spanDelta)))
      d.topOp = &c;
  return d;
}

/// The engine kinds whose busy time changed, e.g. `dma.load +120`.
std::string kindChanges(const OpChange &c) {
  std::string out;
  for (size_t k = 0; k < kEngineKinds.size(); ++k)
    if (c.busyDelta[k] != 0)
      out += (out.empty() ? "" : ", ") + std::string(kEngineKinds[k]) + " " +
             signedText(c.busyDelta[k]);
  return out;
}

std::string stallChanges(const EngineChange &c) {
  const EngineSummary &ea = c.a ? *c.a : kNoEngine, &eb = c.b ? *c.b : kNoEngine;
  std::string out;
  for (int r = 0; r < kNumStallReasons; ++r) {
    int64_t dlt = delta(ea.stall[static_cast<size_t>(r)], eb.stall[static_cast<size_t>(r)]);
    if (dlt != 0)
      out += (out.empty() ? "" : ", ") +
             std::string(stallReasonName(static_cast<StallReason>(r))) + " " +
             signedText(dlt);
  }
  return out;
}

} // namespace

std::string diffText(const Summary &a, const Summary &b) {
  const Diff d = computeDiff(a, b);
  std::string out;
  out += fmt::format("A  {} ({})\nB  {} ({})\n", a.program, a.source, b.program,
                     b.source);
  out += fmt::format("total cycles  {} -> {}  {} ({})\n", a.totalCycles,
                     b.totalCycles, signedText(delta(a.totalCycles, b.totalCycles)),
                     deltaPercent(a.totalCycles, b.totalCycles));

  std::vector<std::vector<std::string>> rows = {
      {"engine", "busy A", "busy B", "delta", "stalls A", "stalls B", "delta",
       "stall reasons changed"}};
  for (const EngineChange &c : d.engines) {
    if (c.busyDelta == 0 && c.stallDelta == 0 && stallChanges(c).empty())
      continue;
    const EngineSummary &ea = c.a ? *c.a : kNoEngine, &eb = c.b ? *c.b : kNoEngine;
    rows.push_back({c.label, std::to_string(ea.busy), std::to_string(eb.busy),
                    signedText(c.busyDelta), std::to_string(ea.stalled()),
                    std::to_string(eb.stalled()), signedText(c.stallDelta),
                    stallChanges(c)});
  }
  out += "\nengines whose time changed (cycles)\n";
  out += rows.size() > 1 ? table(rows, {true, false, false, false, false, false, false, true})
                         : "  none\n";

  rows = {{"op", "span A", "span B", "delta", "", "busy changed by engine kind"}};
  for (const OpChange &c : d.ops) {
    if (c.spanDelta == 0 && kindChanges(c).empty())
      continue;
    const OpSummary &oa = c.a ? *c.a : kNoOp, &ob = c.b ? *c.b : kNoOp;
    rows.push_back({opName(c.op), std::to_string(oa.span()), std::to_string(ob.span()),
                    signedText(c.spanDelta), deltaPercent(oa.span(), ob.span()),
                    kindChanges(c)});
  }
  out += "\nops whose time changed (cycles)\n";
  if (!a.hasOps || !b.hasOps)
    out += "  not in both files\n";
  else
    out += rows.size() > 1 ? table(rows, {true, false, false, false, false, true})
                           : "  none\n";

  out += "\nmost changed";
  if (!d.topOp && !d.topEngine)
    return out + ": nothing\n";
  out += "\n";
  if (d.topOp)
    out += fmt::format("  op {}: span {} cycles\n", opName(d.topOp->op),
                       signedText(d.topOp->spanDelta));
  if (d.topEngine)
    out += fmt::format("  engine {}: busy {} cycles, waiting for bandwidth {} cycles\n",
                       d.topEngine->label, signedText(d.topEngine->busyDelta),
                       signedText(d.topEngine->bandwidthDelta));
  return out;
}

std::string diffJson(const Summary &a, const Summary &b) {
  const Diff d = computeDiff(a, b);
  ordered_json j;
  j["a"] = {{"program", a.program}, {"source", a.source}, {"total_cycles", a.totalCycles}};
  j["b"] = {{"program", b.program}, {"source", b.source}, {"total_cycles", b.totalCycles}};
  j["total_cycles_delta"] = delta(a.totalCycles, b.totalCycles);
  ordered_json engines = ordered_json::array();
  for (const EngineChange &c : d.engines) {
    const EngineSummary &ea = c.a ? *c.a : kNoEngine, &eb = c.b ? *c.b : kNoEngine;
    ordered_json e;
    e["engine"] = c.label;
    e["busy_a"] = ea.busy;
    e["busy_b"] = eb.busy;
    e["busy_delta"] = c.busyDelta;
    e["stall_a"] = ea.stalled();
    e["stall_b"] = eb.stalled();
    e["stall_delta"] = c.stallDelta;
    e["bandwidth_wait_delta"] = c.bandwidthDelta;
    ordered_json reasons;
    for (int r = 0; r < kNumStallReasons; ++r)
      reasons[std::string(stallReasonName(static_cast<StallReason>(r)))] =
          delta(ea.stall[static_cast<size_t>(r)], eb.stall[static_cast<size_t>(r)]);
    e["stall_delta_by_reason"] = reasons;
    engines.push_back(std::move(e));
  }
  j["engines"] = engines;
  ordered_json ops = ordered_json::array();
  for (const OpChange &c : d.ops) {
    const OpSummary &oa = c.a ? *c.a : kNoOp, &ob = c.b ? *c.b : kNoOp;
    ordered_json o;
    o["op"] = c.op;
    o["span_a"] = oa.span();
    o["span_b"] = ob.span();
    o["span_delta"] = c.spanDelta;
    ordered_json busy;
    for (size_t k = 0; k < kEngineKinds.size(); ++k)
      busy[std::string(kEngineKinds[k])] = c.busyDelta[k];
    o["busy_delta"] = busy;
    ops.push_back(std::move(o));
  }
  j["ops"] = ops;
  j["most_changed_op"] = d.topOp ? ordered_json(d.topOp->op) : ordered_json(nullptr);
  j["most_changed_engine"] =
      d.topEngine ? ordered_json(d.topEngine->label) : ordered_json(nullptr);
  return dumpJson(j);
}

} // namespace spyre::sim
