// The analyses of a Profile: engine time, ops with their roofline position,
// and the critical path (Summary.h).
#include "sim/analysis/Summary.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <limits>

namespace spyre::sim {

namespace {

constexpr std::string_view kOutside = "(outside the trace)";

std::string streamLabel(const Profile &p, uint32_t stream) {
  const StreamInfo &s = p.streams[stream];
  return "core " + std::to_string(s.core) + " " + s.engine;
}

/// One step of the backward walk: a record's part of the path, or an edge.
struct Piece {
  ReleaseEdge edge = ReleaseEdge::None;
  int64_t record = -1; ///< runs: the record; edges: the releaser (-1: outside)
  int64_t to = -1;     ///< edges: the released record
  Cycle start = 0;
  Cycle end = 0;
};

/// Calls `fn(index, record)` for every record of `src` in order, reading
/// them a block at a time.
template <typename Fn> void forEachRecord(const RecordSource &src, Fn &&fn) {
  constexpr size_t kBlock = 1024;
  std::vector<RecordView> block(std::min(kBlock, src.size()));
  for (size_t first = 0; first < src.size(); first += kBlock) {
    const size_t n = std::min(kBlock, src.size() - first);
    src.read(first, std::span(block.data(), n));
    for (size_t k = 0; k < n; ++k)
      fn(first + k, block[k]);
  }
}

RecordView recordAt(const RecordSource &src, int64_t i) {
  RecordView v;
  src.read(static_cast<size_t>(i), std::span(&v, 1));
  return v;
}

/// Appends `mnemonic` to a folded list: `ld x2, signal`.
void appendFolded(std::vector<std::pair<std::string, uint64_t>> &groups,
                  std::string_view mnemonic) {
  if (!groups.empty() && groups.back().first == mnemonic) {
    ++groups.back().second;
    return;
  }
  groups.emplace_back(std::string(mnemonic), 1);
}

std::string foldedText(const std::vector<std::pair<std::string, uint64_t>> &groups) {
  // Long runs (a whole loop on the path) keep their first groups.
  constexpr size_t kMaxGroups = 6;
  std::string out;
  for (size_t i = 0; i < groups.size() && i < kMaxGroups; ++i) {
    if (!out.empty())
      out += ", ";
    out += groups[i].first;
    if (groups[i].second > 1)
      out += " x" + std::to_string(groups[i].second);
  }
  if (groups.size() > kMaxGroups)
    out += ", ...";
  return out;
}

} // namespace

Cycle EngineSummary::stalled() const {
  Cycle sum = 0;
  for (Cycle c : stall)
    sum += c;
  return sum;
}

std::vector<PathSegment> criticalPath(const Profile &p) {
  return criticalPath(p, ProfileRecords(p));
}

std::vector<PathSegment> criticalPath(const Profile &p,
                                      const RecordSource &recs) {
  const size_t n = recs.size();
  std::vector<PathSegment> out;
  if (n == 0) {
    if (p.totalCycles > 0)
      out.push_back({ReleaseEdge::None, std::string(kOutside), "", "", 0,
                     p.totalCycles, 0, 0, 0});
    return out;
  }
  // Each record's predecessor in its stream's time order. The simulator's
  // records are in that order already (a stream's instructions complete in
  // turn): one pass finds them. A trace's may not be: its streams are sorted.
  using Times = std::pair<Cycle, Cycle>; // start, end
  std::vector<int64_t> prev(n, -1);
  bool inOrder = true;
  // The last instruction to finish; on a tie the lowest stream, and in it
  // the latest (a zero-length halt after the instruction it follows).
  int64_t cur = 0;
  {
    std::vector<int64_t> last(p.streams.size(), -1);
    std::vector<Times> lastTimes(p.streams.size());
    RecordView best;
    forEachRecord(recs, [&](size_t i, const RecordView &r) {
      if (inOrder) {
        int64_t &l = last[r.stream];
        const Times t{r.start, r.end};
        if (l >= 0 && t < lastTimes[r.stream])
          inOrder = false;
        prev[i] = l;
        l = static_cast<int64_t>(i);
        lastTimes[r.stream] = t;
      }
      if (i == 0 || r.end > best.end ||
          (r.end == best.end && r.stream < best.stream) ||
          (r.end == best.end && r.stream == best.stream &&
           r.start >= best.start)) {
        cur = static_cast<int64_t>(i);
        best = r;
      }
    });
  }
  if (!inOrder) {
    std::vector<std::vector<int64_t>> byStream(p.streams.size());
    std::vector<Times> times(n);
    forEachRecord(recs, [&](size_t i, const RecordView &r) {
      byStream[r.stream].push_back(static_cast<int64_t>(i));
      times[i] = {r.start, r.end};
    });
    std::fill(prev.begin(), prev.end(), -1);
    for (std::vector<int64_t> &list : byStream) {
      std::stable_sort(list.begin(), list.end(), [&](int64_t x, int64_t y) {
        return times[static_cast<size_t>(x)] < times[static_cast<size_t>(y)];
      });
      for (size_t k = 1; k < list.size(); ++k)
        prev[list[k]] = list[k - 1];
    }
  }

  std::vector<Piece> pieces;
  if (const Cycle end = recordAt(recs, cur).end; end < p.totalCycles)
    pieces.push_back({ReleaseEdge::None, -1, -1, end, p.totalCycles});
  // Every step moves to an instruction that ended no later than the current
  // one was released; the bound only guards against a corrupt trace.
  for (size_t steps = 0; steps <= 2 * n; ++steps) {
    const RecordView r = recordAt(recs, cur);
    const Cycle ready = std::clamp(r.ready, r.start, r.end);
    pieces.push_back({ReleaseEdge::None, cur, -1, ready, r.end});
    if (r.edge != ReleaseEdge::None && ready > r.start) {
      const int64_t by = r.releasedBy;
      if (by < 0 || by >= static_cast<int64_t>(n)) {
        pieces.push_back({r.edge, -1, cur, 0, ready});
        break;
      }
      // A signal's token leaves when the signal ends; a transfer or a
      // barrier is released by the other side's posting or arrival, that
      // is when the instruction before it ended.
      const int64_t q = recordAt(recs, by).end <= ready ? by : prev[by];
      const Cycle qEnd = q < 0 ? 0 : recordAt(recs, q).end;
      if (q < 0 || qEnd > ready) {
        pieces.push_back({r.edge, -1, cur, 0, ready});
        break;
      }
      pieces.push_back({r.edge, q, cur, qEnd, ready});
      cur = q;
      continue;
    }
    if (r.start == 0 && prev[cur] < 0)
      break;
    const int64_t before = prev[cur];
    if (before < 0 || recordAt(recs, before).end != r.start) {
      pieces.push_back({ReleaseEdge::None, -1, -1, 0, r.start});
      break;
    }
    cur = before;
  }
  std::reverse(pieces.begin(), pieces.end());
  if (pieces.front().start > 0)
    pieces.insert(pieces.begin(),
                  Piece{ReleaseEdge::None, -1, -1, 0, pieces.front().start});

  // Fold consecutive runs of one stream and op into one segment.
  std::vector<std::pair<std::string, uint64_t>> groups;
  int64_t groupStream = -1;
  uint32_t groupOp = kNoName;
  auto flushGroups = [&] {
    if (!groups.empty() && !out.empty())
      out.back().what = foldedText(groups);
    groups.clear();
  };
  for (const Piece &pc : pieces) {
    if (pc.record < 0) {
      flushGroups();
      groupStream = -1;
      PathSegment seg;
      seg.edge = pc.edge;
      seg.where = pc.edge == ReleaseEdge::None
                      ? std::string(kOutside)
                      : std::string(kOutside) + " -> " +
                            streamLabel(p, recordAt(recs, pc.to).stream);
      seg.start = pc.start;
      seg.end = pc.end;
      out.push_back(seg);
      continue;
    }
    const RecordView r = recordAt(recs, pc.record);
    if (pc.edge != ReleaseEdge::None) {
      flushGroups();
      groupStream = -1;
      PathSegment seg;
      seg.edge = pc.edge;
      seg.where = streamLabel(p, r.stream) + " -> " +
                  streamLabel(p, recordAt(recs, pc.to).stream);
      seg.start = pc.start;
      seg.end = pc.end;
      out.push_back(seg);
      continue;
    }
    if (groupStream != static_cast<int64_t>(r.stream) || groupOp != r.op) {
      flushGroups();
      groupStream = r.stream;
      groupOp = r.op;
      PathSegment seg;
      seg.where = streamLabel(p, r.stream);
      seg.op = std::string(p.nameOf(r.op));
      seg.start = pc.start;
      out.push_back(seg);
    }
    PathSegment &seg = out.back();
    seg.end = pc.end;
    ++seg.instructions;
    seg.busy += r.busy;
    seg.bandwidth += r.bandwidthStall;
    appendFolded(groups, p.nameOf(r.mnemonic));
  }
  flushGroups();
  return out;
}

std::vector<EngineSummary> engineSummaries(const Profile &p) {
  std::vector<EngineSummary> sums(p.streams.size());
  std::vector<bool> seen(p.streams.size(), false);
  for (const InstrRecord &r : p.records) {
    EngineSummary &e = sums[r.stream];
    seen[r.stream] = true;
    ++e.instructions;
    e.busy += r.busy;
    for (size_t k = 0; k < r.stall.size(); ++k)
      e.stall[k] += r.stall[k];
  }
  std::vector<EngineSummary> out;
  for (size_t s = 0; s < sums.size(); ++s) {
    if (!seen[s])
      continue;
    EngineSummary e = sums[s];
    e.core = p.streams[s].core;
    e.engine = p.streams[s].engine;
    Cycle used = e.busy + e.stalled();
    e.idle = p.totalCycles > used ? p.totalCycles - used : 0;
    out.push_back(std::move(e));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const EngineSummary &a, const EngineSummary &b) {
                     return a.core < b.core;
                   });
  return out;
}

Roofline rooflineOf(const OpSummary &op, double clockGhz,
                    double peakMacsPerCyclePerCore, double memoryPeakGbps) {
  Roofline r;
  const uint64_t bytes = op.readBytes + op.writeBytes;
  const double seconds = static_cast<double>(op.span()) / (clockGhz * 1e9);
  if (op.macs > 0) {
    const double flops = 2.0 * static_cast<double>(op.macs);
    r.unit = "TFLOP/s";
    const double computeRoof = 2.0 * peakMacsPerCyclePerCore *
                               static_cast<double>(op.cores) * clockGhz * 1e9 /
                               1e12;
    if (bytes == 0) {
      r.intensity = std::numeric_limits<double>::infinity();
      r.bound = computeRoof;
      r.regime = "compute-bound";
    } else {
      r.intensity = flops / static_cast<double>(bytes);
      const double memoryRoof = r.intensity * memoryPeakGbps * 1e9 / 1e12;
      r.bound = std::min(computeRoof, memoryRoof);
      r.regime = memoryRoof >= computeRoof ? "compute-bound" : "memory-bound";
    }
    r.achieved = seconds > 0 ? flops / seconds / 1e12 : 0.0;
  } else if (bytes > 0) {
    r.unit = "GB/s";
    r.regime = "memory-bound";
    r.bound = memoryPeakGbps;
    r.achieved = seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
  } else {
    return r;
  }
  r.fraction = r.bound > 0 ? r.achieved / r.bound : 0.0;
  return r;
}

std::vector<OpSummary> opSummaries(const Profile &p) {
  return opSummaries(p, ProfileRecords(p));
}

std::vector<OpSummary> opSummaries(const Profile &p,
                                   const RecordSource &records) {
  // What each record adds depends on its stream and its mnemonic: both are
  // looked up once, not per record.
  struct StreamKind {
    int engine = -1; ///< index into kEngineKinds, -1 for none
    bool load = false, store = false;
  };
  std::vector<StreamKind> streamKind(p.streams.size());
  for (size_t s = 0; s < p.streams.size(); ++s) {
    const std::string_view kind = engineKind(p.streams[s].engine);
    for (size_t k = 0; k < kEngineKinds.size(); ++k)
      if (kEngineKinds[k] == kind)
        streamKind[s].engine = static_cast<int>(k);
    streamKind[s].load = kind == "dma.load";
    streamKind[s].store = kind == "dma.store";
  }
  std::vector<bool> ringName(p.names.size(), false);
  for (size_t n = 0; n < p.names.size(); ++n)
    ringName[n] = p.names[n] == "send" || p.names[n] == "rsend";

  // One slot per op name id, and the last for kNoName (no op), which sorts
  // last among equal spans by its empty name.
  const size_t noOp = p.names.size();
  std::vector<OpSummary> byOp(noOp + 1);
  std::vector<bool> seen(noOp + 1, false);
  std::vector<std::vector<bool>> cores(noOp + 1);
  forEachRecord(records, [&](size_t, const RecordView &r) {
    const size_t slot = r.op == kNoName ? noOp : r.op;
    SPYRE_ASSERT(slot <= noOp, "op name index outside the profile's table");
    OpSummary &o = byOp[slot];
    if (!seen[slot]) {
      seen[slot] = true;
      o.op = std::string(p.nameOf(r.op));
      o.first = r.start;
      o.last = r.end;
    }
    o.first = std::min(o.first, r.start);
    o.last = std::max(o.last, r.end);
    ++o.instructions;
    const StreamKind &kind = streamKind[r.stream];
    if (kind.engine >= 0)
      o.busy[static_cast<size_t>(kind.engine)] += r.busy;
    if (kind.load)
      o.readBytes += r.bytes;
    else if (kind.store)
      o.writeBytes += r.bytes;
    else if (r.mnemonic != kNoName && ringName[r.mnemonic])
      o.ringBytes += r.bytes;
    o.macs += r.macs;
    o.sticks += r.sticks;
    const auto core = static_cast<size_t>(p.streams[r.stream].core);
    std::vector<bool> &used = cores[slot];
    if (used.size() <= core)
      used.resize(core + 1, false);
    used[core] = true;
  });
  std::vector<OpSummary> out;
  for (size_t slot = 0; slot <= noOp; ++slot) {
    if (!seen[slot])
      continue;
    OpSummary &o = byOp[slot];
    o.cores = static_cast<int>(
        std::count(cores[slot].begin(), cores[slot].end(), true));
    o.roofline = rooflineOf(o, p.clockGhz, p.peakMacsPerCyclePerCore,
                            p.memoryPeakGbps);
    out.push_back(std::move(o));
  }
  std::stable_sort(out.begin(), out.end(), [](const OpSummary &a, const OpSummary &b) {
    return a.span() != b.span() ? a.span() > b.span() : a.op < b.op;
  });
  return out;
}

Summary summarize(const Profile &p) {
  Summary s;
  s.program = p.program;
  s.source = "trace";
  s.complete = p.complete;
  s.totalCycles = p.totalCycles;
  s.clockGhz = p.clockGhz;
  s.peakMacsPerCyclePerCore = p.peakMacsPerCyclePerCore;
  s.memoryPeakGbps = p.memoryPeakGbps;
  s.engines = engineSummaries(p);
  s.ops = opSummaries(p);
  s.hasOps = true;
  s.criticalPath = criticalPath(p);
  s.hasCriticalPath = true;
  return s;
}

} // namespace spyre::sim
