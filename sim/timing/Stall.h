// The vocabulary the simulator's engine (sim/core) and the schedule analyses
// (sim/analysis) share: why an engine stalls, and which kind of edge
// released an instruction that waited for another stream. It sits below
// both, so that the engine records in these words without depending on the
// analyses that read them.
#pragma once

#include "sim/timing/Time.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace spyre::sim {

/// Why an engine was not doing its own work while it had an instruction.
/// Every stalled cycle of an instruction has exactly one reason, so busy +
/// stalls add up to the instruction's duration.
enum class StallReason : uint8_t {
  Signal,       ///< a wait whose counter was signalled by its own core
  RemoteSignal, ///< a wait whose releasing token came from another core
  Barrier,      ///< a barrier, from arrival to release
  Peer,         ///< a send/recv whose other side was not posted yet
  Memory,       ///< the device-memory channel (queueing of DMA bursts)
  Ring,         ///< a data- or reduce-ring link busy with other traffic
  DmaSlots,     ///< a free slot for another DMA burst in flight
  Deadlock,     ///< blocked until the end of the run, never released
};
constexpr int kNumStallReasons = 8;
using StallCycles = std::array<Cycle, kNumStallReasons>;

/// `signal`, `remote_signal`, ...: the names of the statistics and traces.
std::string_view stallReasonName(StallReason r);
std::optional<StallReason> parseStallReason(std::string_view name);

/// What released an instruction that waited for another stream.
enum class ReleaseEdge : uint8_t {
  None,     ///< nothing: it started when the previous instruction ended
  Signal,   ///< the signal whose token was the last one the wait needed
  Transfer, ///< the other side of a send/recv pair was posted
  Barrier,  ///< the last stream arrived at the barrier
};
std::string_view releaseEdgeName(ReleaseEdge e);
std::optional<ReleaseEdge> parseReleaseEdge(std::string_view name);

} // namespace spyre::sim
