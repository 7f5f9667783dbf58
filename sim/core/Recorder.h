// The observer that keeps a run's records: one slice per executed
// instruction (what it touched, what released it, its busy and stall
// cycles) and the activity counters over time. The statistics' per-op
// figures and critical path and the trace (sim/output/RunOutput.h) are
// written from them after the run.
//
// It is attached only when SimOptions::trace asks for records. The Machine's
// parts call it through a pointer that is null otherwise, so a run without
// records pays one branch per call site and nothing else (no virtual call).
#pragma once

#include "sim/core/Activity.h"
#include "sim/core/Region.h"
#include "sim/core/StreamState.h"
#include "sim/timing/DmaTiming.h"
#include "sim/timing/MemoryChannel.h"
#include "sim/timing/Ring.h"
#include "sim/timing/Stall.h"

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

namespace spyre::sim {

/// One executed instruction, 128 bytes (its one-byte fields together, so
/// that no padding is kept). Its index in the Recorder's slices (and
/// Machine::trace()) is its `seq` in the trace.
struct TraceSlice {
  uint32_t stream = 0;
  uint32_t instr = 0;
  Cycle start = 0;
  Cycle end = 0;
  /// When what it waited for arrived; `start` when nothing released it.
  Cycle ready = 0;
  /// The slice whose signal, posting or barrier arrival released it, -1.
  int64_t releasedBy = -1;
  /// A receive's matching send (recv, racc), -1 otherwise.
  int64_t partner = -1;
  Cycle busy = 0;
  uint64_t bytes = 0; ///< device-memory bytes (ld, st) or ring bytes
  uint64_t work = 0;  ///< MACs (mm, mmi8) or sticks (SFU)
  /// Lowest and highest stick touched (inclusive), -1 when none: LX read,
  /// LX written, device memory (read by ld, written by st). Stick numbers
  /// of device memory fit 32 bits (limits of hw/ConfigSchema); an
  /// out-of-bounds access saturates.
  int32_t lxReadLo = -1, lxReadHi = -1;
  int32_t lxWriteLo = -1, lxWriteHi = -1;
  int32_t memLo = -1, memHi = -1;
  /// An instruction stalls for at most three reasons (a DMA: slots, memory
  /// and ring), kept as (reason, cycles) pairs to keep records small.
  static constexpr int kMaxStalls = 3;
  /// What kind of edge `releasedBy` is.
  ReleaseEdge edge = ReleaseEdge::None;
  uint8_t stallCount = 0;
  std::array<StallReason, kMaxStalls> stallReason{};
  std::array<Cycle, kMaxStalls> stallCycles{};

  StallCycles stalls() const {
    StallCycles out{};
    for (int k = 0; k < stallCount; ++k)
      out[static_cast<size_t>(stallReason[static_cast<size_t>(k)])] +=
          stallCycles[static_cast<size_t>(k)];
    return out;
  }
};

static_assert(sizeof(TraceSlice) == 128 &&
              std::is_trivially_copyable_v<TraceSlice> &&
              std::is_trivially_destructible_v<TraceSlice>);

/// The slices of a run, in fixed-size chunks: a long run appends millions
/// without copying the earlier ones or touching memory twice (a chunk is
/// allocated uninitialised; each slice is written once, when it is appended).
class SliceLog {
public:
  static constexpr size_t kChunk = size_t{1} << 14;

  void push_back(const TraceSlice &s) {
    if (size_ % kChunk == 0)
      chunks_.push_back(newChunk());
    std::construct_at(chunks_.back().get() + size_ % kChunk, s);
    ++size_;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const TraceSlice &operator[](size_t i) const {
    return chunks_[i / kChunk][i % kChunk];
  }

  class Iterator {
  public:
    Iterator(const SliceLog *log, size_t i) : log_(log), i_(i) {}
    const TraceSlice &operator*() const { return (*log_)[i_]; }
    Iterator &operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iterator &o) const { return i_ != o.i_; }

  private:
    const SliceLog *log_;
    size_t i_;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size_}; }

private:
  struct FreeChunk {
    void operator()(TraceSlice *chunk) const;
  };
  using Chunk = std::unique_ptr<TraceSlice[], FreeChunk>;
  static Chunk newChunk();

  std::vector<Chunk> chunks_;
  size_t size_ = 0;
};

/// Activity over time, kept with the records.
struct ActivityCounters {
  WindowCounter memoryRead; ///< bytes the memory channel moved
  WindowCounter memoryWrite;
  /// Link-cycles reserved, per ring direction (0: increasing positions).
  std::array<WindowCounter, 2> dataRing;
  std::array<WindowCounter, 2> reduceRing;
  /// Per core, per LX stick: the start cycle of the first instruction that
  /// wrote it (kNever when none); empty for cores without streams.
  std::vector<std::vector<Cycle>> lxFirstWrite;
  static constexpr Cycle kNever = ~Cycle{0};
};

class Recorder {
public:
  /// `activity` false: the records alone, no ActivityCounters.
  Recorder(int cores, int streams, const MemoryChannel &memory,
           const Ring &dataRing, const Ring &reduceRing, bool activity);

  /// Keeps LX first-write times for `core` (a core that runs a stream),
  /// when the recorder keeps activity.
  void addCore(int core, int64_t lxSticks);

  /// The index the next recorded slice gets.
  int64_t nextSlice() const { return static_cast<int64_t>(slices_.size()); }
  const SliceLog &slices() const { return slices_; }
  const ActivityCounters &activity() const { return activity_; }

  /// The current instruction of `st` starts: a fresh slice, and the
  /// statistics its busy and stall cycles are counted from.
  void begin(const StreamState &st) {
    Note &n = notes_[static_cast<size_t>(st.index)];
    n.slice = TraceSlice{};
    n.busyAtStart = st.stats.busyCycles;
    n.stallTotalAtStart = st.stats.stallTotal;
    n.stallAtStart = st.stats.stallCycles;
  }
  /// The slice being filled for stream `stream`'s current instruction.
  TraceSlice &current(int stream) {
    return notes_[static_cast<size_t>(stream)].slice;
  }
  /// What the current instruction of `stream` waited for arrived at `ready`,
  /// from slice `by` over an edge of kind `edge`.
  void released(int stream, Cycle ready, int64_t by, ReleaseEdge edge) {
    TraceSlice &n = current(stream);
    n.ready = ready;
    n.releasedBy = by;
    n.edge = edge;
  }
  /// What the current instruction of `st` touches (`spans`: each region's
  /// lowest and highest stick), and the LX sticks it writes (first-write
  /// times).
  void footprint(const StreamState &st, std::span<const Footprint> fp,
                 std::span<const StickSpan> spans);
  /// One DMA burst's bytes over the memory channel and the data ring.
  void memoryBurst(bool load, const DmaRunTiming &timing, uint64_t bytes);
  /// One transfer's link-cycles on a ring.
  void ring(bool reduce, const RingTransferResult &tr, uint64_t bytes);
  /// Appends the current instruction's slice of `st`, from `start` to `end`.
  void record(const StreamState &st, Cycle start, Cycle end);

private:
  struct Note {
    TraceSlice slice;
    Cycle busyAtStart = 0;
    Cycle stallTotalAtStart = 0;
    StallCycles stallAtStart{};
  };

  const MemoryChannel &memory_;
  const Ring &dataRing_;
  const Ring &reduceRing_;
  int cores_;
  bool keepActivity_;
  std::vector<Note> notes_;
  SliceLog slices_;
  ActivityCounters activity_;
};

} // namespace spyre::sim
