// What a run of the simulator is asked to do and where it must stop: the
// options of `spyre sim` and `spyre run` alike (docs/simulator.md, Limits).
#pragma once

#include "sim/timing/Time.h"

#include <cstdint>
#include <functional>

namespace spyre::sim {

/// How far a run has come, for a progress line (SimOptions::progress).
struct RunProgress {
  Cycle cycle = 0;           ///< the simulated time of the stream running
  uint64_t instructions = 0; ///< executed so far
  double wallSeconds = 0;    ///< since the run started
  double clockGhz = 1;       ///< of the config, for the simulated time
};

/// Records a run keeps at most by default: 2^25, 4 GiB of
/// TraceSlice (docs/simulator.md, Limits). A 40-layer prefill of
/// Granite-3.3-8B executes about 28 million instructions.
constexpr uint64_t kDefaultMaxRecords = uint64_t{1} << 25;

struct SimOptions {
  bool numerics = true;          ///< false: timing only, no data computed
  bool checks = true;            ///< schedule checks (races, bounds, ...)
  Cycle maxCycles = 0;           ///< stop past this cycle; 0 = no limit
  uint64_t maxInstructions = 0;  ///< stop past this many; 0 = no limit
  /// Keep one record per executed instruction (what it touched, what
  /// released it) and the activity counters: for traces, the critical path
  /// and the per-op statistics. Off, the run keeps only the totals.
  bool trace = false;
  /// With `trace`: also keep the activity counters (device memory and ring
  /// use, LX written, over time), which only the trace shows; a run for
  /// statistics alone leaves them off.
  bool activity = true;
  /// With `trace`: stop with a `max-records` finding once this many records
  /// are kept (they grow with the instructions executed, about 140 bytes
  /// each); 0 = no limit.
  uint64_t maxRecords = kDefaultMaxRecords;
  /// Called about every `progressSeconds` of wall time while the run goes
  /// (never when empty). It only observes: results do not depend on it.
  std::function<void(const RunProgress &)> progress;
  double progressSeconds = 3;
};

} // namespace spyre::sim
