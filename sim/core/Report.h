// The run's statistics (JSON) and trace (Chrome trace-event JSON, which
// Perfetto UI and chrome://tracing open). Both are written from the Machine's
// counters after the run, with fixed key order and number formatting, so the
// same run gives the same bytes (formats in docs/sim-output.md).
#pragma once

#include "sim/core/Machine.h"

#include <string>

namespace spyre::sim {

/// Statistics as pretty-printed JSON.
std::string statsJson(const Machine &machine);

/// The trace: one process per core, one thread per engine stream, one
/// complete event per executed instruction with its text and source op.
std::string traceJson(const Machine &machine);

/// A short human summary for the terminal.
std::string summaryText(const Machine &machine);

} // namespace spyre::sim
