// Schedule summaries of a run, for `spyre trace summary` and `spyre trace
// diff`: where each engine's time went (busy, stalls by reason, idle), the
// critical path, and the source ops by time with their roofline position.
//
// A summary is computed from a Profile (the simulator's own records, or a
// trace read back) or read from a statistics JSON, which carries the same
// figures (the simulator writes them with opsJson and criticalPathJson), so
// the summary of a run's statistics and of its full trace are the same.
#pragma once

#include "sim/analysis/Profile.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::sim {

/// Engine kinds, in the order summaries list them.
constexpr std::array<std::string_view, 5> kEngineKinds = {
    "dma.load", "dma.store", "pt", "sfu", "ring"};

struct EngineSummary {
  int core = 0;
  std::string engine;
  uint64_t instructions = 0;
  Cycle busy = 0;
  StallCycles stall{};
  /// After the stream's last instruction, while others still ran.
  Cycle idle = 0;

  Cycle stalled() const;
  /// busy + stalls + idle: the run's total cycles for every engine.
  Cycle total() const { return busy + stalled() + idle; }
};

/// Where an op's work stands against the roofline of the cores it ran on.
struct Roofline {
  /// "compute-bound", "memory-bound", or "-" when the op moved no device
  /// memory and multiplied nothing.
  std::string regime = "-";
  /// FLOP per device-memory byte (2 per MAC); infinite for MACs without
  /// device-memory traffic; 0 without MACs.
  double intensity = 0;
  /// "TFLOP/s" for ops that multiply, "GB/s" for ops that only move data.
  std::string unit;
  double bound = 0;    ///< min(compute roof, intensity x memory peak), in unit
  double achieved = 0; ///< the op's work over its span, in unit
  double fraction = 0; ///< achieved / bound
};

struct OpSummary {
  std::string op; ///< "" for instructions without a source op
  Cycle first = 0; ///< its first instruction started
  Cycle last = 0;  ///< its last instruction ended
  uint64_t instructions = 0;
  std::array<Cycle, kEngineKinds.size()> busy{}; ///< by kEngineKinds
  uint64_t readBytes = 0;  ///< device memory, by ld
  uint64_t writeBytes = 0; ///< device memory, by st
  uint64_t ringBytes = 0;  ///< sent over the data and reduce rings
  uint64_t macs = 0;
  uint64_t sticks = 0; ///< SFU sticks
  int cores = 0;       ///< cores it ran on
  Roofline roofline;

  Cycle span() const { return last - first; }
};

/// One piece of the critical path. A run is consecutive instructions of one
/// stream and one op, counted from when the first was released (or started)
/// to when the last ended; an edge is the travel from the instruction that
/// released the next run (a signal, a posted transfer, a barrier's last
/// arrival) to the moment the release arrived.
struct PathSegment {
  ReleaseEdge edge = ReleaseEdge::None; ///< None: a run
  std::string where; ///< runs: `core 0 pt.0`; edges: `core 0 ring -> core 1 ring`
  std::string op;    ///< runs: the source op
  std::string what;  ///< runs: the mnemonics in order, repeats folded (`ld x4`)
  Cycle start = 0;
  Cycle end = 0;
  uint64_t instructions = 0;
  Cycle busy = 0;
  /// Waiting for bandwidth inside the run: memory, ring and DMA slots.
  Cycle bandwidth = 0;

  Cycle cycles() const { return end - start; }
};

/// Time of the ops a program runs on the host (the host fallback): the PCIe
/// transfers to and from it and the host's compute.
struct HostSummary {
  uint64_t ops = 0;
  Cycle pcie = 0;
  Cycle compute = 0;
  uint64_t bytesToHost = 0;
  uint64_t bytesFromHost = 0;

  Cycle total() const { return pcie + compute; }
};

struct Summary {
  std::string program;
  std::string source; ///< "stats" or "trace"
  bool complete = true;
  Cycle totalCycles = 0;
  double clockGhz = 1;
  double peakMacsPerCyclePerCore = 0;
  double memoryPeakGbps = 0;
  std::vector<EngineSummary> engines; ///< by core, then stream order
  std::vector<OpSummary> ops;         ///< longest span first, then by name
  bool hasOps = false;                ///< false: the file had no op records
  std::vector<PathSegment> criticalPath; ///< in time order
  bool hasCriticalPath = false;
  /// Present when the run had host ops.
  std::optional<HostSummary> host;
};

/// The critical path of a run: the chain that ends at the last instruction
/// to finish, walked backwards. From each instruction it goes to what it
/// waited on last: the instruction that released it (a signal: the signal
/// itself; a transfer or barrier: the instruction before the other side's
/// posting or arrival), or else the previous instruction of its stream. The
/// segments cover [0, total] without gaps or overlaps: their cycles add up
/// to the run's total (a partial profile adds a run named `(outside the
/// trace)` for the time before its first record).
std::vector<PathSegment> criticalPath(const Profile &profile);
/// The same of `records`, with `profile`'s figures, streams and names (its
/// own records are not read).
std::vector<PathSegment> criticalPath(const Profile &profile,
                                      const RecordSource &records);

/// Busy, stalls and idle of each stream, from the records.
std::vector<EngineSummary> engineSummaries(const Profile &profile);

/// Per source op: span, busy per engine kind, bytes, MACs and roofline.
std::vector<OpSummary> opSummaries(const Profile &profile);
/// The same of `records`, with `profile`'s figures, streams and names.
std::vector<OpSummary> opSummaries(const Profile &profile,
                                   const RecordSource &records);

Roofline rooflineOf(const OpSummary &op, double clockGhz,
                    double peakMacsPerCyclePerCore, double memoryPeakGbps);

Summary summarize(const Profile &profile);

/// The `ops` and `critical_path` arrays of the statistics JSON.
nlohmann::ordered_json opsJson(const std::vector<OpSummary> &ops);
nlohmann::ordered_json criticalPathJson(const std::vector<PathSegment> &path);

/// Reads a statistics JSON or a trace JSON, told apart by content (a trace
/// has `traceEvents`). Malformed input is a UserError naming `fileName`.
Summary readSummary(std::string_view text, const std::string &fileName);

/// A trace written by `spyre sim --trace` as a Profile.
Profile profileFromTrace(const nlohmann::json &trace,
                         const std::string &fileName);

/// Text for the terminal; `topOps` longest ops are listed.
std::string summaryText(const Summary &s, size_t topOps = 10);
std::string summaryJson(const Summary &s);

/// What changed from `a` to `b`: total cycles, each engine's busy and
/// stalls, each op's span and engine time, and the op and engine whose time
/// changed most.
std::string diffText(const Summary &a, const Summary &b);
std::string diffJson(const Summary &a, const Summary &b);

} // namespace spyre::sim
