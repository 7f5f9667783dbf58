// The DMA engines of every core: a `ld` or `st` moves its device-memory
// region run by run, split into bursts of dma.burst_bytes that go through
// the memory port (the memory channel and the data ring, or the SystemC
// layer's socket) with at most dma.max_outstanding of them in flight. A
// burst that must wait for a free slot waits for its time in the event
// queue, so bursts reach the shared timelines in time order.
//
// Of an instruction's time, the waits for a free slot and the memory and
// ring queueing of its last burst are stalls; the rest is busy.
#pragma once

#include "isa/Instr.h"
#include "sim/core/Fifo.h"
#include "sim/core/Region.h"
#include "sim/core/RunState.h"
#include "sim/timing/CostModel.h"

#include <cstdint>
#include <span>
#include <vector>

namespace spyre::sim {

class DmaEngines {
public:
  DmaEngines(RunState &run, const CostModel &costs);

  /// With a cycle limit: whether the ld/st of `st` with footprint `fp`
  /// could not end before it (then it reports MaxCycles and stops the run).
  bool pastCycleLimit(const StreamState &st, std::span<const Footprint> fp);
  /// Starts the ld/st `resolved` of `st` (footprint `fp`; `inBounds` false:
  /// reported, moves nothing) and issues its bursts; true when it
  /// completed, false when the stream waits for a burst slot.
  bool start(StreamState &st, const isa::Instr &resolved,
             std::span<const Footprint> fp, bool inBounds);
  /// Issues the next bursts of `st`'s DMA at `now`; true once it completed.
  bool resume(StreamState &st, Cycle now) { return issueBursts(st, now); }

  uint64_t readBytes() const { return readBytes_; }
  uint64_t writeBytes() const { return writeBytes_; }

private:
  /// A DMA instruction in flight: its bursts are issued one event at a time.
  struct Transfer {
    Region memRegion;
    Region lxRegion; ///< same runs as memRegion, for a port that carries data
    bool isLoad = true;
    int64_t i1 = 0, i2 = 0; ///< current run
    int64_t runOffset = 0;  ///< sticks of the current run already issued
    Fifo<Cycle> inFlight;   ///< done times of the bursts in flight
    Cycle issueAt = 0;      ///< when the instruction started
    Cycle nextBurstAt = 0;
    Cycle done = 0;
    Cycle slotWait = 0;                      ///< waiting for a free slot
    Cycle lastMemWait = 0, lastRingWait = 0; ///< queueing of the last burst
  };

  /// Issues bursts up to the first that must wait for a free slot after
  /// `now` (scheduled as an event); true once all are issued and the
  /// instruction completed.
  bool issueBursts(StreamState &st, Cycle now);
  void finish(StreamState &st);

  RunState &run_;
  const CostModel &costs_;
  const int64_t burstSticks_;
  std::vector<Transfer> transfers_; ///< per stream
  uint64_t readBytes_ = 0;
  uint64_t writeBytes_ = 0;
};

} // namespace spyre::sim
