// The run's statistics (JSON) and trace (Chrome trace-event JSON, which
// Perfetto UI and chrome://tracing open). Both are written from the Machine's
// counters after the run, with fixed key order and number formatting, so the
// same run gives the same bytes (formats in docs/sim-output.md).
#pragma once

#include "sim/analysis/Profile.h"
#include "sim/core/Machine.h"
#include "support/ByteSink.h"

#include <limits>
#include <map>
#include <string>
#include <vector>

namespace spyre::sim {

/// The compiler's estimate of each op's cycles, by op name
/// (compiler/plan/Estimate.h), to set beside the simulated ones.
using OpEstimates = std::map<std::string, int64_t>;

/// Statistics as pretty-printed JSON. A run that kept per-instruction
/// records (SimOptions::trace) adds the per-op figures and the critical path;
/// with `estimates`, each op they name also gets `estimated_cycles` and
/// `estimate_ratio` (estimated over simulated span cycles).
std::string statsJson(const Machine &machine,
                      const OpEstimates *estimates = nullptr);

/// What part of a run a trace shows: slices overlapping the cycles
/// [start, end) on the listed cores (all when empty), flows whose two ends
/// are both shown, counters clipped to the window.
struct TraceFilter {
  Cycle start = 0;
  Cycle end = std::numeric_limits<Cycle>::max();
  std::vector<int> cores; ///< ascending, no repeats; empty = every core

  bool everything() const {
    return start == 0 && end == std::numeric_limits<Cycle>::max() && cores.empty();
  }
  bool showsCore(int core) const;
};

/// `START:END` in cycles (END > START) for --trace-window; a malformed value
/// is a usage error naming the flag.
void parseTraceWindow(const std::string &text, TraceFilter &filter);
/// `0,2-5` for --trace-cores: cores below `numCores`, ranges inclusive.
void parseTraceCores(const std::string &text, int numCores, TraceFilter &filter);
/// The filter of `--trace-window` and `--trace-cores` (either may be
/// empty: not given). Either one without a trace to limit (`tracing`
/// false) is a usage error naming it.
TraceFilter traceFilterOf(bool tracing, const std::string &window,
                          const std::string &cores, int numCores);

/// The trace (needs a run with SimOptions::trace): a `chip` process with
/// the chip-wide counters and the findings, one process per core with one
/// thread per engine stream, one complete event per executed instruction
/// with what it touched and what released it, flow arrows for the sync edges
/// that released a wait or barrier and for every send -> receive pair, and
/// counters for device-memory bandwidth, ring use and LX written per core.
/// Written to `out` in pieces of about a MiB as it is made, never whole in
/// memory; `out` is not finished.
void writeTraceJson(const Machine &machine, ByteSink &out,
                    const TraceFilter &filter = {});
/// The trace of writeTraceJson as one string.
std::string traceJson(const Machine &machine, const TraceFilter &filter = {});

/// The run's per-instruction records as the schedule analyses read them
/// (empty records without SimOptions::trace).
Profile profileOf(const Machine &machine);

/// The run's records as the schedule analyses read them, without a copy:
/// the profile's figures, streams and names, and a source reading the
/// records from the machine's log (Summary.h takes both). The machine
/// outlives it.
class MachineRecords final : public RecordSource {
public:
  explicit MachineRecords(const Machine &machine);

  /// The run's figures, streams and the names of every instruction of the
  /// program; no records.
  const Profile &profile() const { return profile_; }
  size_t size() const override;
  void read(size_t first, std::span<RecordView> out) const override;

  /// What an executed instruction is called: its mnemonic's and its source
  /// op's ids in profile().names, and whether its work counts MACs.
  struct Names {
    uint32_t mnemonic = kNoName;
    uint32_t op = kNoName;
    bool macs = false;
  };
  const Names &namesOf(const TraceSlice &slice) const {
    return names_[slice.stream][slice.instr];
  }

private:
  const Machine &machine_;
  Profile profile_;
  std::vector<std::vector<Names>> names_; ///< by stream, then instruction
};

/// A short human summary for the terminal.
std::string summaryText(const Machine &machine);

} // namespace spyre::sim
