// Cycle costs of engine work, every figure read from the hardware config.
//
// The ISA names a timing class for each instruction (docs/isa.md#machine-model:
// latency is not in the ISA); this file holds the classes and turns the work
// of one instruction into cycles: matrix (PT) and vector (SFU) work here, DMA
// runs through the shared memory and ring timelines (DmaTiming.h).
#pragma once

#include "hw/HwConfig.h"
#include "sim/timing/Time.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace spyre::sim {

// The timing classes themselves are the ISA table's (isa::TimingClass); the
// simulator maps each class to one of these costs.


enum class PtPrecision { Dl16, Int8, Int4 };
enum class SfuClass { Simple, Transcendental, Reduce };
/// The element format an SFU instruction works in: its sticks hold
/// isa::kStickBytes / 2 DL16 or isa::kStickBytes / 4 FP32 elements.
enum class SfuFormat { Dl16, Fp32 };

class CostModel {
public:
  explicit CostModel(const hw::HwConfig &config);

  /// MACs per cycle of one corelet's PT: rows * cols * simd, times
  /// pt.int8Speedup for INT8/FP8 and pt.int4Speedup for INT4.
  uint64_t ptMacsPerCycle(PtPrecision precision) const;
  /// Passes of pt.passRows rows of M: ceil(m / passRows).
  uint64_t ptPasses(uint64_t m) const;
  /// The weight-stationary array's efficiency for M = m rows:
  /// min(1, sqrt(passes / pt.fullRatePasses)). Full rate needs
  /// pt.fullRatePasses passes to hide the array's fill and drain; below that
  /// it falls roughly like the square root
  /// (docs/hardware.md#corelets-and-the-pt).
  double ptEfficiency(uint64_t m) const;
  /// One corelet's cycles for an (m x k) * (k x n) product, all > 0:
  /// pt.setupCycles + ceil(m*k*n / (macsPerCycle * efficiency)).
  Cycle ptCycles(uint64_t m, uint64_t k, uint64_t n,
                 PtPrecision precision) const;

  /// Cycles between two passes of one array (the class's throughput).
  Cycle sfuCyclesPerStick(SfuClass cls) const;
  /// Issue to first result: sfu.transcendentalLatencyCycles for
  /// transcendental ops, sfu.pipelineLatencyCycles for the others.
  Cycle sfuLatencyCycles(SfuClass cls) const;
  /// Elements all arrays of one corelet take in one pass of `fmt`:
  /// sfu.arraysPerCorelet * sfu.dl16Lanes (or fp32Lanes).
  uint64_t sfuElementsPerPass(SfuFormat fmt) const;
  /// One corelet's cycles for `sticks` sticks of `fmt` (docs/hardware.md#sfu):
  /// latency(cls) + ceil(sticks * stick elements / elementsPerPass(fmt)) *
  /// cyclesPerStick(cls). The arrays share each instruction's elements.
  Cycle sfuCycles(SfuClass cls, uint64_t sticks,
                  SfuFormat fmt = SfuFormat::Dl16) const;

  /// Cycles from a DMA instruction's issue to its first memory request.
  Cycle dmaIssueLatencyCycles() const { return dmaIssueLatency_; }
  /// Extra cycles to start each contiguous run of sticks.
  Cycle dmaRunSetupCycles() const { return dmaRunSetup_; }
  /// Runs one DMA engine keeps in flight; the scheduler enforces it.
  int dmaMaxOutstanding() const { return dmaMaxOutstanding_; }

private:
  const hw::PtConfig pt_;
  const hw::SfuConfig sfu_;
  const Cycle dmaIssueLatency_;
  const Cycle dmaRunSetup_;
  const int dmaMaxOutstanding_;
};

} // namespace spyre::sim
