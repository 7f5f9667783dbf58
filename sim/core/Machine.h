// The chip as plain C++: every core's engine streams, the shared timelines
// (device memory, data ring, reduce ring) and the synchronisation objects,
// advanced by one deterministic event loop.
//
// Events are ordered by (time, core, stream, sequence number), never by host
// or SystemC process order, so a run gives the same cycles, numbers and
// findings every time. A stream runs ahead without returning to the queue as
// long as its next instruction touches nothing shared and its time is not
// past the earliest queued event; DMA bursts, ring transfers, signals, waits
// and barriers go through the queue. The SystemC layer (sim/systemc/) only
// decides how far to advance between kernel time steps: results do not depend
// on it.
#pragma once

#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "sim/analysis/Profile.h"
#include "sim/check/HappensBefore.h"
#include "sim/check/LxShadow.h"
#include "sim/check/WrittenRanges.h"
#include "sim/core/Activity.h"
#include "sim/core/DeviceMemory.h"
#include "sim/core/Findings.h"
#include "sim/core/Region.h"
#include "sim/core/SimOptions.h"
#include "sim/timing/CostModel.h"
#include "sim/timing/DmaTiming.h"
#include "sim/timing/MemoryChannel.h"
#include "sim/timing/Ring.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

namespace spyre::sim {

struct EngineStats {
  uint64_t instructions = 0;
  Cycle busyCycles = 0;
  std::array<Cycle, kNumStallReasons> stallCycles{};
  Cycle finishedAt = 0; ///< cycle of its halt (or of the end of the run)
};

/// One executed instruction, kept when SimOptions::trace is set. Its index
/// in Machine::trace() is its `seq` in the trace.
struct TraceSlice {
  uint32_t stream = 0;
  uint32_t instr = 0;
  Cycle start = 0;
  Cycle end = 0;
  /// When what it waited for arrived; `start` when nothing released it.
  Cycle ready = 0;
  /// The slice whose signal, posting or barrier arrival released it, -1.
  int64_t releasedBy = -1;
  ReleaseEdge edge = ReleaseEdge::None;
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

/// One run of a host op (the `host` instruction): the three parts of its
/// time, kept for statistics and the trace. Cycles are chip cycles.
struct HostRun {
  uint32_t op = 0;      ///< index into Program::hostOps
  uint32_t stream = 0;  ///< the stream that ran the instruction
  int64_t slice = -1;   ///< its trace slice (tracing only)
  Cycle start = 0;      ///< the transfer to the host starts
  Cycle toHostEnd = 0;  ///< the host starts computing
  Cycle computeEnd = 0; ///< the transfer back starts
  Cycle end = 0;        ///< the outputs are in device memory
  uint64_t bytesToHost = 0;
  uint64_t bytesFromHost = 0;

  Cycle pcieCycles() const { return (toHostEnd - start) + (end - computeEnd); }
  Cycle computeCycles() const { return computeEnd - toHostEnd; }
};

/// Chip cycles of a host op's parts (the `host` instruction, docs/isa.md):
/// each transfer is the link latency plus bytes over the PCIe bandwidth,
/// the compute is flops over the host rate, at least one cycle.
struct HostTiming {
  Cycle toHost = 0;
  Cycle compute = 0;
  Cycle fromHost = 0;
};
HostTiming hostOpTiming(const hw::HwConfig &config, uint64_t bytesToHost,
                        uint64_t flops, uint64_t bytesFromHost);

/// The slices of a run, in fixed-size chunks: a long run appends millions
/// without copying the earlier ones or touching memory twice.
class SliceLog {
public:
  static constexpr size_t kChunk = size_t{1} << 14;

  void push_back(const TraceSlice &s) {
    if (size_ % kChunk == 0)
      chunks_.push_back(std::make_unique_for_overwrite<TraceSlice[]>(kChunk));
    chunks_.back()[size_ % kChunk] = s;
    ++size_;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const TraceSlice &operator[](size_t i) const { return chunks_[i / kChunk][i % kChunk]; }

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
  std::vector<std::unique_ptr<TraceSlice[]>> chunks_;
  size_t size_ = 0;
};

/// Activity over time, kept when SimOptions::trace is set.
struct ActivityCounters {
  WindowCounter memoryRead;  ///< bytes the memory channel moved
  WindowCounter memoryWrite;
  /// Link-cycles reserved, per ring direction (0: increasing positions).
  std::array<WindowCounter, 2> dataRing;
  std::array<WindowCounter, 2> reduceRing;
  /// Per core, per LX stick: the start cycle of the first instruction that
  /// wrote it (kNever when none); empty for cores without streams.
  std::vector<std::vector<Cycle>> lxFirstWrite;
  static constexpr Cycle kNever = ~Cycle{0};
};

/// Where DMA bursts get their timing: the plain-C++ models by default, or a
/// TLM-2.0 socket when the SystemC layer plugs one in.
class MemoryPort {
public:
  virtual ~MemoryPort() = default;
  /// Times one burst of `bytes` at device address `addrBytes` between device
  /// memory and core `core`, started by its DMA engine at cycle `t`. When the
  /// port carries data, `data` points at the burst's bytes in the core's LX
  /// (the destination of a read, the source of a write); it is null when no
  /// bytes move (a timing-only run, or a port that does not carry data).
  virtual DmaRunTiming dmaBurst(Cycle t, int core, uint64_t addrBytes,
                                uint64_t bytes, Direction dir, bool newRun,
                                uint8_t *data) = 0;
  /// Whether the port moves each burst's bytes itself; otherwise the machine
  /// copies an instruction's whole region when the instruction starts.
  virtual bool carriesData() const { return false; }
};

/// The timing models behind the default MemoryPort (and behind the TLM target).
class ChipTiming : public MemoryPort {
public:
  explicit ChipTiming(const hw::HwConfig &config);
  DmaRunTiming dmaBurst(Cycle t, int core, uint64_t addrBytes, uint64_t bytes,
                        Direction dir, bool newRun, uint8_t *data) override;

  const CostModel &costs() const { return costs_; }
  MemoryChannel &memory() { return memory_; }
  Ring &dataRing() { return dataRing_; }
  Ring &reduceRing() { return reduceRing_; }
  const MemoryChannel &memory() const { return memory_; }
  const Ring &dataRing() const { return dataRing_; }
  const Ring &reduceRing() const { return reduceRing_; }

private:
  CostModel costs_;
  MemoryChannel memory_;
  Ring dataRing_;
  Ring reduceRing_;
};

/// A FIFO over a vector that keeps its storage when it empties, so the hot
/// paths (tokens of a counter, bursts in flight) do not allocate.
template <typename T> class Fifo {
public:
  bool empty() const { return head_ == buf_.size(); }
  size_t size() const { return buf_.size() - head_; }
  T &front() { return buf_[head_]; }
  void clear() {
    buf_.clear();
    head_ = 0;
  }
  void pop_front() {
    if (++head_ == buf_.size())
      clear();
    else if (head_ >= 64 && head_ * 2 >= buf_.size()) {
      buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  void push_back(T v) { buf_.push_back(std::move(v)); }
  /// Inserts keeping the elements ordered by `less`, after equal ones.
  template <typename Less> void insertSorted(T v, Less less) {
    buf_.push_back(std::move(v));
    for (size_t i = buf_.size() - 1; i > head_ && less(buf_[i], buf_[i - 1]); --i)
      std::swap(buf_[i], buf_[i - 1]);
  }

private:
  std::vector<T> buf_;
  size_t head_ = 0;
};

class Machine {
public:
  /// `port` times DMA bursts; null means this machine's own ChipTiming.
  /// `memory` is the device memory the program runs against, kept by the
  /// caller between programs (run/Device.h); null means a memory of this
  /// machine's own, all zeros.
  Machine(const hw::HwConfig &config, const isa::Program &program,
          SimOptions options, MemoryPort *port = nullptr,
          DeviceMemory *memory = nullptr);
  ~Machine();
  Machine(const Machine &) = delete;
  Machine &operator=(const Machine &) = delete;

  const hw::HwConfig &config() const { return config_; }
  const isa::Program &program() const { return program_; }
  /// Routes DMA burst timing through `port` (the SystemC layer's TLM socket).
  void setMemoryPort(MemoryPort *port) { port_ = port ? port : &timing_; }
  DeviceMemory &deviceMemory() { return memory_; }
  const DeviceMemory &deviceMemory() const { return memory_; }
  ChipTiming &timing() { return timing_; }
  const ChipTiming &timing() const { return timing_; }

  /// Marks a device-memory range (in sticks) as holding defined data (inputs
  /// and constants are marked by the constructor).
  void markMemoryWritten(int64_t firstStick, int64_t sticks);

  /// Earliest pending event, or nothing when the queue is empty.
  std::optional<Cycle> nextEventTime() const;
  /// Processes every event with time < horizon.
  void runUntil(Cycle horizon);
  /// True once the queue is empty or a limit stopped the run.
  bool stopped() const { return stopped_ || queue_.empty(); }
  /// Ends the run: reports deadlocked streams and closes statistics.
  void finish();
  /// runUntil(no limit) + finish(): a whole run without SystemC.
  void run();

  /// The last cycle any stream was busy.
  Cycle totalCycles() const { return totalCycles_; }
  uint64_t instructionsExecuted() const { return instructions_; }
  const std::vector<Finding> &findings() const { return findings_; }
  uint64_t findingsDropped() const { return findingsDropped_; }

  int numStreams() const { return static_cast<int>(streams_.size()); }
  const isa::Stream &streamCode(int s) const { return *streams_[s].code; }
  const EngineStats &streamStats(int s) const { return streams_[s].stats; }
  const SliceLog &trace() const { return trace_; }
  const ActivityCounters &activity() const { return activity_; }
  bool tracing() const { return options_.trace; }
  uint64_t macOps() const { return macOps_; }
  /// Every host op run, in execution order.
  const std::vector<HostRun> &hostRuns() const { return hostRuns_; }
  uint64_t deviceReadBytes() const { return dramRead_; }
  uint64_t deviceWriteBytes() const { return dramWrite_; }
  /// Peak LX bytes written-and-live is not tracked; this is the highest LX
  /// stick any instruction touched, per core (a bound on occupancy).
  int64_t lxHighWaterSticks(int core) const { return lxHighWater_[core]; }

private:
  enum class Block { None, Counter, Barrier, Transfer, Dma };

  struct LoopFrame {
    uint32_t first = 0;
    uint32_t end = 0;
    uint32_t remaining = 0;
  };

  /// A DMA instruction in flight: its bursts are issued one event at a time.
  struct DmaState {
    Region memRegion;
    Region lxRegion; ///< same runs as memRegion, for a port that carries data
    bool isLoad = true;
    int64_t i1 = 0, i2 = 0;   ///< current run
    int64_t runOffset = 0;    ///< sticks of the current run already issued
    Fifo<Cycle> inFlight; ///< done times of the bursts in flight
    Cycle issueAt = 0;        ///< when the instruction started
    Cycle nextBurstAt = 0;
    Cycle done = 0;
    uint64_t bytes = 0;
    Cycle slotWait = 0;                 ///< waiting for a free burst slot
    Cycle lastMemWait = 0, lastRingWait = 0; ///< queueing of the last burst
  };

  struct StreamState {
    const isa::Stream *code = nullptr;
    int index = 0;
    int core = 0;
    uint32_t pc = 0;
    std::array<int64_t, 16> regs{};
    /// limits.max_loop_depth is at most 16 (hw/ConfigSchema.cpp).
    std::array<LoopFrame, 16> loops{};
    int depth = 0;
    Cycle time = 0;
    Cycle instrStart = 0;
    bool halted = false;
    Block block = Block::None;
    Cycle blockedSince = 0;
    int waitCounter = 0;
    int64_t waitValue = 0;
    int waitBarrier = 0;
    int peerCore = 0;
    bool reduceRing = false;
    DmaState dma;
    EngineStats stats;
    /// Tracing only: the record of the current instruction, and the
    /// statistics when it started (its busy and stalls are the difference).
    TraceSlice note;
    Cycle busyAtStart = 0;
    StallCycles stallAtStart{};
  };

  struct Token {
    int64_t amount = 0;
    VectorClock clock;
    Cycle visibleAt = 0; ///< when the signal reaches the counter
    int core = 0;        ///< the signalling core
    int64_t slice = -1;  ///< the signal's trace slice (tracing only)
  };
  /// The token a wait took last: the one that released it.
  struct Release {
    Cycle visible = 0;
    int core = 0;
    int64_t slice = -1;
  };
  struct Counter {
    int64_t available = 0;
    Fifo<Token> tokens; ///< ordered by visibleAt
    std::deque<int> waiters; ///< stream indices, in blocking order
  };
  struct BarrierState {
    std::vector<int> arrived;
    VectorClock joined;
    Cycle lastArrival = 0;
  };
  struct TransferPost {
    int stream = 0;
    Cycle time = 0;
    Region region;
    VectorClock clock; ///< sender's release (sends only)
    bool inBounds = true; ///< false: reported, moves no data
  };
  struct Channel {
    std::deque<TransferPost> sends;
    std::deque<TransferPost> recvs;
  };

  enum class EventKind : uint8_t { Step, DmaBurst };
  /// 16 bytes, compared as two integers: the heap is the hot path of
  /// programs whose streams interact often. `order` packs, from the top:
  /// core (16 bits), stream (16 bits), sequence number (31 bits), kind (1).
  struct Event {
    Cycle time = 0;
    uint64_t order = 0;

    int core() const { return static_cast<int>(order >> 48); }
    int stream() const { return static_cast<int>((order >> 32) & 0xFFFF); }
    EventKind kind() const { return static_cast<EventKind>(order & 1); }
    bool operator>(const Event &o) const {
      return time != o.time ? time > o.time : order > o.order;
    }
  };
  /// The `order` an event of `stream` on `core` would have, sequence 0.
  static uint64_t orderKey(int core, int stream) {
    return static_cast<uint64_t>(core) << 48 |
           static_cast<uint64_t>(stream) << 32;
  }

  void push(EventKind kind, Cycle time, int core, int stream);
  void handle(const Event &e);
  /// Runs stream `s` from its current pc until it blocks, halts, hands over
  /// to the queue, or would pass the earliest queued event.
  void runStream(StreamState &st);
  /// Executes one instruction; returns false when the stream must stop
  /// running (blocked, halted, or rescheduled through the queue).
  bool execute(StreamState &st);
  void advancePc(StreamState &st);
  void complete(StreamState &st, Cycle end);
  /// Tracing: appends the current instruction's slice, ending at `end`.
  void recordSlice(StreamState &st, Cycle start, Cycle end);
  /// Tracing: notes what the current instruction touches (footprint in
  /// footprintScratch_) and the LX sticks it writes.
  void noteFootprint(StreamState &st);
  void noteRing(bool reduce, const RingTransferResult &tr, uint64_t bytes);
  isa::Instr resolve(const StreamState &st, const isa::Instr &in) const;

  bool checkAccesses(StreamState &st, const isa::Instr &resolved,
                     bool deferLxWrites);
  /// The race and uninitialised-read checks of one LX region, its conflicts
  /// appended to conflictScratch_.
  void shadowAccess(int core, const Region &r, bool write, const Epoch &e);
  /// With a cycle limit: whether a ld/st could not end before it (then it
  /// reports MaxCycles and stops the run instead of executing it).
  bool dmaPastCycleLimit(StreamState &st, const isa::Instr &resolved);
  void startDma(StreamState &st, const isa::Instr &resolved, bool inBounds);
  /// Issues the DMA's bursts up to the first that must wait for a free
  /// slot after `now` (scheduled as an event); true once all are issued and
  /// the instruction completed.
  bool issueBursts(StreamState &st, Cycle now);
  void finishDma(StreamState &st);
  Counter &counterOf(int core, int counter);
  /// A release of `stream`'s clock in recycled storage.
  VectorClock takeClock(int stream);
  /// Takes `need` tokens for `stream`; returns the latest of them.
  Release takeTokens(Counter &c, int64_t need, int stream);
  /// The stall reason of waiting for a token from `fromCore`.
  static StallReason waitReason(const StreamState &st, const Release &r) {
    return r.core == st.core ? StallReason::Signal : StallReason::RemoteSignal;
  }
  void doSignal(StreamState &st, const isa::Instr &in);
  bool doWait(StreamState &st, const isa::Instr &in);
  bool doBarrier(StreamState &st, const isa::Instr &in);
  bool doTransfer(StreamState &st, const isa::Instr &resolved, bool inBounds);
  void doHost(StreamState &st, const isa::Instr &in);
  /// `lr`: a register from an INT32 lane of LX, its bound checked.
  bool doRegisterLoad(StreamState &st, const isa::Instr &in);
  void matchTransfers(Channel &ch, bool reduce, int srcCore, int dstCore);
  void wake(StreamState &st, const Release &release);

  int hops(int coreA, int coreB) const;
  Cycle signalLatency(int fromCore, int toCore) const;
  Cycle barrierLatency() const;
  Cycle ctrlCycles(isa::Opcode op) const;

  void report(FindingKind kind, const StreamState *st, Cycle cycle,
              std::string message, std::string range = {},
              std::string conflicting = {});
  std::string describeInstr(int stream, uint32_t instr) const;
  std::string sticksText(const char *space, int64_t first, int64_t last) const;

  const hw::HwConfig &config_;
  const isa::Program &program_;
  SimOptions options_;
  ChipTiming timing_;
  MemoryPort *port_;
  std::unique_ptr<DeviceMemory> ownedMemory_; ///< when none was given
  DeviceMemory &memory_;
  std::vector<std::vector<uint8_t>> lx_;
  std::vector<StreamState> streams_;
  std::vector<std::vector<int>> streamsOfCore_;

  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
  uint64_t seq_ = 0;

  std::vector<Counter> counters_;          ///< core * countersPerCore + c
  std::vector<BarrierState> barriers_;
  /// (reduce ring?, source core, destination core) -> pending transfers.
  std::map<std::tuple<bool, int, int>, Channel> channels_;

  HappensBefore hb_;
  std::vector<VectorClock> clockPool_;
  std::unique_ptr<LxShadow> shadow_;
  WrittenRanges written_;
  std::vector<Footprint> footprintScratch_;
  std::vector<AccessConflict> conflictScratch_;

  std::vector<Finding> findings_;
  uint64_t findingsDropped_ = 0;
  SliceLog trace_;
  ActivityCounters activity_;
  std::vector<int64_t> lxHighWater_;
  std::vector<HostRun> hostRuns_;
  Cycle totalCycles_ = 0;
  uint64_t instructions_ = 0;
  /// Progress reporting (SimOptions::progress): when the run started and
  /// when the next line is due.
  std::chrono::steady_clock::time_point runStart_{};
  std::chrono::steady_clock::time_point nextProgress_{};
  void noteProgress(const StreamState &st);
  uint64_t macOps_ = 0;
  uint64_t dramRead_ = 0;
  uint64_t dramWrite_ = 0;
  bool stopped_ = false;
  bool finished_ = false;
};

} // namespace spyre::sim
