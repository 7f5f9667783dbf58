// What the parts of the Machine (sim/core/Machine.h) share while a run goes:
// its inputs, the streams, the event queue, the findings, the observers
// attached to it, and the run's totals. The parts hold a reference to it;
// the Machine owns it.
#pragma once

#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "sim/core/DeviceMemory.h"
#include "sim/core/EventQueue.h"
#include "sim/core/FindingLog.h"
#include "sim/core/Recorder.h"
#include "sim/core/SimOptions.h"
#include "sim/core/StreamState.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace spyre::sim {

class MemoryPort;
class ScheduleChecker;

struct RunState {
  RunState(const hw::HwConfig &cfg, const isa::Program &prog, SimOptions opts,
           MemoryPort *memoryPort, DeviceMemory &deviceMemory)
      : config(cfg), program(prog), options(std::move(opts)), port(memoryPort),
        memory(deviceMemory), findings(prog) {}

  const hw::HwConfig &config;
  const isa::Program &program;
  SimOptions options;
  MemoryPort *port; ///< where DMA bursts get their timing
  DeviceMemory &memory;
  /// Per core: its LX contents, only for cores that run a stream and only
  /// when the run computes numbers.
  std::vector<std::vector<uint8_t>> lx;
  std::vector<StreamState> streams;
  EventQueue queue;
  FindingLog findings;

  /// Observers, null when not attached (SimOptions::checks, ::trace).
  ScheduleChecker *checker = nullptr;
  Recorder *records = nullptr;

  Cycle totalCycles = 0; ///< the last cycle any stream was busy
  uint64_t instructions = 0;
  bool stopped = false; ///< a limit or an invalid operand ended the run

  /// The current instruction of `st` ends at `end`: its slice is recorded,
  /// the stream moves on.
  void complete(StreamState &st, Cycle end) {
    if (records)
      records->record(st, st.instrStart, end);
    st.time = end;
    totalCycles = std::max(totalCycles, end);
    st.advancePc();
  }
  /// `st` goes on at its time, through the queue.
  void resume(const StreamState &st) {
    queue.push(EventKind::Step, st.time, st.core, st.index);
  }
  /// Reports a finding that ends the run.
  void stop(FindingKind kind, const StreamState *st, Cycle cycle,
            std::string message) {
    findings.report(kind, st, cycle, std::move(message));
    stopped = true;
  }
};

} // namespace spyre::sim
