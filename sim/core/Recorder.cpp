// The records of a run (Recorder.h).
#include "sim/core/Recorder.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <limits>
#include <new>

namespace spyre::sim {

SliceLog::Chunk SliceLog::newChunk() {
  return Chunk(
      static_cast<TraceSlice *>(::operator new(kChunk * sizeof(TraceSlice))));
}

void SliceLog::FreeChunk::operator()(TraceSlice *chunk) const {
  ::operator delete(chunk);
}

Recorder::Recorder(int cores, int streams, const MemoryChannel &memory,
                   const Ring &dataRing, const Ring &reduceRing,
                   bool activity)
    : memory_(memory), dataRing_(dataRing), reduceRing_(reduceRing),
      cores_(cores), keepActivity_(activity),
      notes_(static_cast<size_t>(streams)) {}

void Recorder::addCore(int core, int64_t lxSticks) {
  if (!keepActivity_)
    return;
  // Sized on the first core that runs a stream: a program without streams
  // keeps no per-core tracks at all.
  activity_.lxFirstWrite.resize(static_cast<size_t>(cores_));
  activity_.lxFirstWrite[static_cast<size_t>(core)].assign(
      static_cast<size_t>(lxSticks), ActivityCounters::kNever);
}

void Recorder::footprint(const StreamState &st, std::span<const Footprint> fp,
                         std::span<const StickSpan> spans) {
  TraceSlice &n = current(st.index);
  auto narrow = [](int64_t v) {
    return static_cast<int32_t>(
        std::clamp<int64_t>(v, 0, std::numeric_limits<int32_t>::max()));
  };
  auto widen = [&](int32_t &lo, int32_t &hi, const StickSpan &span) {
    lo = lo < 0 ? narrow(span.lowest) : std::min(lo, narrow(span.lowest));
    hi = std::max(hi, narrow(span.highest));
  };
  for (size_t k = 0; k < fp.size(); ++k) {
    const Footprint &f = fp[k];
    const StickSpan &span = spans[k];
    if (f.deviceMemory) {
      widen(n.memLo, n.memHi, span);
      continue;
    }
    if (!f.write) {
      widen(n.lxReadLo, n.lxReadHi, span);
      continue;
    }
    widen(n.lxWriteLo, n.lxWriteHi, span);
    if (!keepActivity_)
      continue;
    std::vector<Cycle> &firstWrite =
        activity_.lxFirstWrite[static_cast<size_t>(st.core)];
    if (span.lowest < 0 || span.highest >= static_cast<int64_t>(firstWrite.size()))
      continue; // out of bounds: reported, not performed
    f.region.forEachRun([&](int64_t first, int64_t len) {
      for (int64_t stick = first; stick < first + len; ++stick) {
        Cycle &w = firstWrite[static_cast<size_t>(stick)];
        w = std::min(w, st.time);
      }
    });
  }
}

void Recorder::memoryBurst(bool load, const DmaRunTiming &timing,
                           uint64_t bytes) {
  if (!keepActivity_)
    return;
  const Cycle moved =
      timing.memory.dataDone > timing.memory.start + memory_.latencyCycles()
          ? timing.memory.dataDone - memory_.latencyCycles()
          : timing.memory.start + 1;
  (load ? activity_.memoryRead : activity_.memoryWrite)
      .add(timing.memory.start, moved, bytes);
  ring(false, timing.ring, bytes);
}

void Recorder::ring(bool reduce, const RingTransferResult &tr, uint64_t bytes) {
  if (!keepActivity_ || tr.hops == 0 || bytes == 0)
    return;
  const Ring &ring = reduce ? reduceRing_ : dataRing_;
  std::array<WindowCounter, 2> &counters =
      reduce ? activity_.reduceRing : activity_.dataRing;
  const Cycle duration = ring.durationCycles(bytes);
  counters[tr.direction == RingDirection::Increasing ? 0 : 1].add(
      tr.start, tr.start + duration, static_cast<uint64_t>(tr.hops) * duration);
}

void Recorder::record(const StreamState &st, Cycle start, Cycle end) {
  Note &note = notes_[static_cast<size_t>(st.index)];
  TraceSlice &n = note.slice;
  n.stream = static_cast<uint32_t>(st.index);
  n.instr = st.pc;
  n.start = start;
  n.end = end;
  n.ready =
      n.edge == ReleaseEdge::None ? start : std::clamp(n.ready, start, end);
  n.busy = st.stats.busyCycles - note.busyAtStart;
  n.stallCount = 0;
  // Most instructions do not stall: the total tells without the reasons.
  if (st.stats.stallTotal != note.stallTotalAtStart)
    for (size_t r = 0; r < note.stallAtStart.size(); ++r)
      if (Cycle c = st.stats.stallCycles[r] - note.stallAtStart[r]; c > 0) {
        SPYRE_ASSERT(
            n.stallCount < TraceSlice::kMaxStalls,
            "an instruction stalled for more reasons than a slice keeps");
        n.stallReason[n.stallCount] = static_cast<StallReason>(r);
        n.stallCycles[n.stallCount] = c;
        ++n.stallCount;
      }
  slices_.push_back(n);
}

} // namespace spyre::sim
