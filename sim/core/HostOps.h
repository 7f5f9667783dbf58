// Host ops (the `host` instruction, docs/isa.md): the stream hands device
// tensors to the host over PCIe, the host computes, and the results come
// back to device memory. Timed by the link and the host's rate
// (hostOpTiming); every run is kept for the statistics and the trace.
#pragma once

#include "hw/HwConfig.h"
#include "isa/Instr.h"
#include "sim/core/RunState.h"

#include <cstdint>
#include <vector>

namespace spyre::sim {

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

class HostOps {
public:
  explicit HostOps(RunState &run) : run_(run) {}

  /// Runs the host op of `in` for `st` (or stops the run when it cannot end
  /// before the cycle limit).
  void run(StreamState &st, const isa::Instr &in);

  /// Every host op run, in execution order.
  const std::vector<HostRun> &runs() const { return runs_; }

private:
  RunState &run_;
  std::vector<HostRun> runs_;
};

} // namespace spyre::sim
