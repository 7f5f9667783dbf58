// Stream execution: each engine stream's in-order instruction dispatch and
// control flow (scalar registers, loops, halt), the PT and SFU work local to
// its core, the bounds of every access, and the run's limits. Work that
// touches the rest of the chip goes to the part that owns it: ld/st to the
// DMA engines, signals, waits, barriers and ring transfers to the sync
// fabric, `host` to the host ops.
//
// A stream runs ahead without returning to the queue as long as its next
// instruction touches nothing shared; a DMA, ring or host instruction runs
// in place only when its stream is the earliest event of the chip.
#pragma once

#include "isa/Instr.h"
#include "sim/core/InstrPlan.h"
#include "sim/core/Region.h"
#include "sim/core/RunState.h"
#include "sim/timing/CostModel.h"

#include <chrono>
#include <cstdint>
#include <vector>

namespace spyre::sim {

class DmaEngines;
class HostOps;
class SyncFabric;

class StreamExecutor {
public:
  StreamExecutor(RunState &run, const CostModel &costs, DmaEngines &dma,
                 SyncFabric &sync, HostOps &host);

  /// Runs `st` from its pc until it blocks, halts, hands over to the queue,
  /// or would pass the earliest queued event.
  void run(StreamState &st);

  uint64_t macOps() const { return macOps_; }
  /// The highest LX stick any instruction of `core` touched, plus one.
  int64_t lxHighWater(int core) const {
    return lxHighWater_[static_cast<size_t>(core)];
  }

private:
  /// Executes one instruction; false when the stream must stop running
  /// (blocked, halted, or rescheduled through the queue).
  bool execute(StreamState &st);
  /// The same for a DMA, ring, PT or SFU instruction `in` (apart, so that the
  /// control and sync instructions' path stays short).
  bool executeData(StreamState &st, const isa::Instr &in);
  /// `in` with its address fields resolved against the stream's registers.
  isa::Instr resolve(const StreamState &st, const isa::Instr &in) const;
  /// The same, with the address fields `plan` names.
  isa::Instr resolve(const StreamState &st, const isa::Instr &in,
                     const InstrPlan &plan) const;
  /// Reports every access of footprint_ (its sticks spans_) outside LX or
  /// device memory; true when all are inside (then the checks observer sees
  /// them).
  bool checkAccesses(StreamState &st, bool deferLxWrites);
  /// Reports the instruction or record limit the run reached before the
  /// current instruction of `st`, and stops it.
  void stopAtLimit(StreamState &st);
  Cycle ctrlCycles(isa::Opcode op) const;
  /// `lr`: a register from an INT32 lane of LX, its bound checked.
  bool registerLoad(StreamState &st, const isa::Instr &in);
  void noteProgress(const StreamState &st);

  RunState &run_;
  const CostModel &costs_;
  DmaEngines &dma_;
  SyncFabric &sync_;
  HostOps &host_;
  const Cycle scalarCycles_, ctrlCycles_;
  /// --max-instructions and --max-records, the largest count when 0 (none).
  const uint64_t instructionLimit_, recordLimit_;
  const int64_t lxSticks_, memSticks_; ///< LX and device memory, in sticks
  InstrPlans plans_;
  std::vector<Footprint> footprint_; ///< the current instruction's
  /// Lowest and highest stick of each of footprint_'s regions.
  std::vector<StickSpan> spans_;
  std::vector<int64_t> lxHighWater_; ///< per core
  uint64_t macOps_ = 0;
  /// Progress reporting (SimOptions::progress): when the run started and
  /// when the next line is due.
  std::chrono::steady_clock::time_point runStart_{};
  std::chrono::steady_clock::time_point nextProgress_{};
};

} // namespace spyre::sim
