// The chip as plain C++: one deterministic event loop over the parts of the
// chip, each in its own file with one job:
//
//   StreamExecutor  every engine stream's dispatch and control flow, the PT
//                   and SFU work, access bounds and the run's limits
//   DmaEngines      ld/st bursts over the memory port (memory channel and
//                   data ring)
//   SyncFabric      counters, barriers, and the ring channels that match
//                   sends with receives
//   HostOps         the `host` instruction over PCIe
//
// and two observers, attached only when asked for: the ScheduleChecker
// (SimOptions::checks: races and reads of data never written) and the
// Recorder (SimOptions::trace: per-instruction records and activity, from
// which the statistics and the trace are written, sim/output/RunOutput.h).
// The parts call an observer through a pointer that is null when it is not
// attached, so a timing-only run pays a branch per call site and no virtual
// call. The parts share the RunState (streams, queue, findings, totals).
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
#include "sim/core/DeviceMemory.h"
#include "sim/core/DmaEngines.h"
#include "sim/core/Findings.h"
#include "sim/core/HostOps.h"
#include "sim/core/Recorder.h"
#include "sim/core/RunState.h"
#include "sim/core/SimOptions.h"
#include "sim/core/StreamExecutor.h"
#include "sim/core/StreamState.h"
#include "sim/core/SyncFabric.h"
#include "sim/timing/CostModel.h"
#include "sim/timing/DmaTiming.h"
#include "sim/timing/MemoryChannel.h"
#include "sim/timing/Ring.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace spyre::sim {

class ScheduleChecker;

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

  const hw::HwConfig &config() const { return run_.config; }
  const isa::Program &program() const { return run_.program; }
  /// Routes DMA burst timing through `port` (the SystemC layer's TLM socket).
  void setMemoryPort(MemoryPort *port) { run_.port = port ? port : &timing_; }
  DeviceMemory &deviceMemory() { return run_.memory; }
  const DeviceMemory &deviceMemory() const { return run_.memory; }
  ChipTiming &timing() { return timing_; }
  const ChipTiming &timing() const { return timing_; }

  /// Marks a device-memory range (in sticks) as holding defined data (inputs
  /// and constants are marked by the constructor). Only the checks read it.
  void markMemoryWritten(int64_t firstStick, int64_t sticks);

  /// Earliest pending event, or nothing when the queue is empty.
  std::optional<Cycle> nextEventTime() const;
  /// Processes every event with time < horizon.
  void runUntil(Cycle horizon);
  /// True once the queue is empty or a limit stopped the run.
  bool stopped() const { return run_.stopped || run_.queue.empty(); }
  /// Ends the run: reports deadlocked streams and closes statistics.
  void finish();
  /// runUntil(no limit) + finish(): a whole run without SystemC.
  void run();

  /// The last cycle any stream was busy.
  Cycle totalCycles() const { return run_.totalCycles; }
  uint64_t instructionsExecuted() const { return run_.instructions; }
  const std::vector<Finding> &findings() const {
    return run_.findings.findings();
  }
  uint64_t findingsDropped() const { return run_.findings.dropped(); }

  int numStreams() const { return static_cast<int>(run_.streams.size()); }
  const isa::Stream &streamCode(int s) const { return *run_.streams[s].code; }
  const EngineStats &streamStats(int s) const { return run_.streams[s].stats; }
  /// The records (empty without SimOptions::trace).
  const SliceLog &trace() const;
  const ActivityCounters &activity() const;
  bool tracing() const { return records_ != nullptr; }
  uint64_t macOps() const { return exec_.macOps(); }
  /// Every host op run, in execution order.
  const std::vector<HostRun> &hostRuns() const { return host_.runs(); }
  uint64_t deviceReadBytes() const { return dma_.readBytes(); }
  uint64_t deviceWriteBytes() const { return dma_.writeBytes(); }
  /// Peak LX bytes written-and-live is not tracked; this is the highest LX
  /// stick any instruction touched, per core (a bound on occupancy).
  int64_t lxHighWaterSticks(int core) const { return exec_.lxHighWater(core); }

private:
  ChipTiming timing_;
  std::unique_ptr<DeviceMemory> ownedMemory_; ///< when none was given
  RunState run_;
  /// The observers, null when not asked for.
  std::unique_ptr<ScheduleChecker> checker_;
  std::unique_ptr<Recorder> records_;
  DmaEngines dma_;
  SyncFabric sync_;
  HostOps host_;
  StreamExecutor exec_;
  bool finished_ = false;
};

} // namespace spyre::sim
