// The simulation options `spyre sim` and `spyre run` share, with the same
// names, meanings and checks: limits, schedule checks, the trace's window
// and cores, the SystemC quantum and the progress line (docs/simulator.md).
#pragma once

#include "sim/core/SimOptions.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace spyre::cli {

struct SimFlags {
  bool noChecks = false;
  uint64_t maxCycles = 0;
  uint64_t maxInstructions = 0;
  uint64_t maxRecords = sim::kDefaultMaxRecords;
  uint64_t quantum = 1000;
  std::string traceWindow;
  std::string traceCores;
  std::string progress = "auto"; ///< auto (stderr is a terminal), always, never
  double progressSeconds = 3;
};

/// Adds the options to `cmd`, writing into `flags` (which must outlive it).
void addSimFlags(CLI::App &cmd, SimFlags &flags);

/// The limits, checks and progress line of `flags` in `options`. The
/// progress line goes to stderr, prefixed with `command` (`spyre sim`).
void applySimFlags(const SimFlags &flags, const char *command,
                   sim::SimOptions &options);

/// `spyre sim: 12.5 ms simulated (18750000 cycles), 3400000 instructions,
/// 1.7 M instructions/s`: the progress line, without its newline.
std::string progressLine(const char *command, const sim::RunProgress &p);

} // namespace spyre::cli
