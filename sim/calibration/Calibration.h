// Calibration of the timing model against the public Spyre figures
// (docs/hardware.md#measured-figures): small generated programs that each
// exercise one primitive (streaming DMA, the PT matrix unit, a ring link), run
// timing-only on a sim::Machine, and the table that sets what they measure
// beside the published values (docs/calibration.md).
#pragma once

#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "sim/timing/Time.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spyre::sim::calibration {

/// What a streaming program moves between device memory and LX.
enum class StreamKind {
  OneWay, ///< every core only loads (the load engine alone)
  Mixed,  ///< every core loads and stores equal amounts at the same time
};

/// Size of a streaming measurement.
struct StreamingSpec {
  int cores = 1; ///< active cores 0 .. cores - 1
  StreamKind kind = StreamKind::OneWay;
  int64_t sticksPerInstr = 4096; ///< one ld/st moves this many sticks (512 KiB)
  int instrsPerEngine = 8;       ///< ld (and st) instructions per core
};

/// Size of a PT measurement: `instrsPerCorelet` mm (or mmi8) instructions of
/// m x k x n on every corelet of core 0.
struct PtSpec {
  uint64_t m = 64;
  uint64_t k = 512;
  uint64_t n = 512;
  bool int8 = false; ///< mmi8 instead of mm
  int instrsPerCorelet = 8;
};

/// Size of a ring measurement: `transfers` send/recv pairs of `sticks` each.
struct RingSpec {
  int64_t sticks = 4096; ///< 512 KiB per transfer
  int transfers = 8;
};

/// Work done and the cycles it took (Machine::totalCycles of the run).
struct Measurement {
  uint64_t work = 0; ///< bytes for DMA and ring, MACs for the PT
  Cycle cycles = 0;
  /// work per nanosecond at chip.clockGhz: GB/s for bytes, MAC/ns for MACs.
  double perNs(const hw::HwConfig &config) const;
};

/// Core c loads sticksPerInstr * instrsPerEngine sticks from its own input
/// tensor into LX in long contiguous ld instructions; with StreamKind::Mixed
/// its store engine writes as many sticks from another LX buffer to its own
/// output tensor at the same time.
isa::Program streamingProgram(const hw::HwConfig &config,
                              const StreamingSpec &spec);
/// Both PT streams of core 0 run spec.instrsPerCorelet products back to back.
isa::Program ptProgram(const hw::HwConfig &config, const PtSpec &spec);
/// Core `from` sends spec.transfers tiles to core `to` over the data ring.
isa::Program ringPairProgram(const hw::HwConfig &config, const RingSpec &spec,
                             int from, int to);
/// Every core sends spec.transfers tiles to the next core (core-id order,
/// wrapping round) and receives as many from the previous one. Each core has
/// one ring stream, so even cores send first and odd cores receive first.
/// Needs an even chip.cores.
isa::Program ringShiftProgram(const hw::HwConfig &config, const RingSpec &spec);

/// An LX-to-LX relayout of split 2 over every core, in the form of IBM's
/// cost model: each core walks a span of 2 * spec.sticks sticks per transfer
/// round, keeps half of its own slice (copied LX to LX by the SFUs of both
/// corelets, the part of a relayout that never leaves the core) and sends
/// the other half to the next core over the data ring while it receives as
/// much from the previous one (the ring part). Needs an even chip.cores.
isa::Program relayoutProgram(const hw::HwConfig &config, const RingSpec &spec);

/// Runs `program` timing-only (no numerics, no schedule checks) and returns
/// its total cycles; `work` is left zero. Asserts that the run ended without
/// findings: a calibration program that deadlocks is a bug.
Measurement runTimingOnly(const hw::HwConfig &config,
                          const isa::Program &program);

/// Bytes moved to and from device memory by the streaming program, over its
/// cycles.
Measurement measureStreaming(const hw::HwConfig &config,
                             const StreamingSpec &spec);
/// MACs of core 0's PTs over the cycles of the PT program.
Measurement measurePt(const hw::HwConfig &config, const PtSpec &spec);
/// Bytes core 0 sends to core 1 (adjacent on the ring) over the cycles.
Measurement measureRingLink(const hw::HwConfig &config, const RingSpec &spec);
/// The ring shift of every core: `work` is the bytes one core receives (the
/// same for every core), over the cycles of the whole shift.
Measurement measureRingShift(const hw::HwConfig &config, const RingSpec &spec);

/// A row kernel of the compiler (compiler/codegen/ReductionKernels.cpp) over DL16
/// rows, as the calibration measures it.
enum class RowKernelKind { Softmax, LayerNorm, RmsNorm };

/// Size of a row-kernel measurement: one op of `rows` x `cols` DL16 on
/// `cores` cores (layer norm with weight and bias, RMS norm with a weight).
struct RowKernelSpec {
  RowKernelKind kind = RowKernelKind::Softmax;
  int64_t rows = 512;
  int64_t cols = 1024;
  int cores = 1;
};

/// The compiler's kernel for `spec`, emitted alone in a program.
isa::Program rowKernelProgram(const hw::HwConfig &config,
                              const RowKernelSpec &spec);
/// Bytes the kernel moves between device memory and LX (its input and
/// output rows, and its weight vectors once per core) over its cycles: the
/// rate a memory-bound kernel shows is the mixed streaming rate.
Measurement measureRowKernel(const hw::HwConfig &config,
                             const RowKernelSpec &spec);
/// The compiler's transpose of a DL16 [n x n] matrix (a restickify: the
/// stick dim changes) through device memory on `cores` cores.
isa::Program restickifyProgram(const hw::HwConfig &config, int64_t n,
                               int cores);
/// Bytes read and written (2 n^2 DL16) over the cycles of the transpose:
/// the form of IBM's restickify figure (torch-spyre cost_model.py charges
/// read and written bytes at bw_restickify_gbps).
Measurement measureRestickify(const hw::HwConfig &config, int64_t n,
                              int cores);
/// "softmax", "layer norm", "RMS norm".
std::string_view rowKernelName(RowKernelKind kind);

/// The relayout of relayoutProgram: `work` is the span one core walks
/// (2 * sticks * transfers sticks: IBM's bytes / cores x split), over the
/// cycles.
Measurement measureRelayout(const hw::HwConfig &config, const RingSpec &spec);

/// How a table row relates its modelled value to the published one.
enum class Comparison {
  Checked,     ///< a primitive shows the figure; tests hold it within 10%
  Unpublished, ///< no published value: the model's answer, for the record
  Reference,   ///< a whole-kernel or not-comparable figure, shown for context
};

/// One row of the calibration table.
struct Figure {
  std::string name;
  std::string unit;                ///< "GB/s", "MAC/ns"
  std::optional<double> published; ///< the public figure, if there is one
  double modelled = 0;
  Comparison comparison = Comparison::Checked;

  /// modelled / published; only with a published value.
  double ratio() const;
  /// |ratio - 1| <= 0.10; only with a published value.
  bool withinTenPercent() const;
};

/// Why a config cannot run the calibration programs: the config key at fault
/// and what the programs need.
struct Unsupported {
  std::string keyPath;
  std::string message;
};
/// Nothing when `config` can run every calibration program; otherwise too
/// little LX or device memory, or fewer than two cores.
std::optional<Unsupported> unsupportedReason(const hw::HwConfig &config);

/// Every figure of the calibration table, measured on `config`, in table
/// order. Published values are the ones of docs/hardware.md.
/// `config` must be supported (no unsupportedReason).
std::vector<Figure> calibrationFigures(const hw::HwConfig &config);

/// The markdown table: figure, published value, modelled value, ratio,
/// within 10%. Deterministic text: one decimal for values, three for ratios.
std::string calibrationTable(const std::vector<Figure> &figures);

} // namespace spyre::sim::calibration
