// Names of the stall reasons and release edges (Stall.h).
#include "sim/timing/Stall.h"

namespace spyre::sim {

namespace {

constexpr std::array<std::string_view, kNumStallReasons> kStallNames = {
    "signal", "remote_signal", "barrier",   "peer",
    "memory", "ring",          "dma_slots", "deadlock"};

constexpr std::array<std::string_view, 4> kEdgeNames = {"none", "signal",
                                                        "transfer", "barrier"};

} // namespace

std::string_view stallReasonName(StallReason r) {
  return kStallNames[static_cast<size_t>(r)];
}

std::optional<StallReason> parseStallReason(std::string_view name) {
  for (size_t i = 0; i < kStallNames.size(); ++i)
    if (kStallNames[i] == name)
      return static_cast<StallReason>(i);
  return std::nullopt;
}

std::string_view releaseEdgeName(ReleaseEdge e) {
  return kEdgeNames[static_cast<size_t>(e)];
}

std::optional<ReleaseEdge> parseReleaseEdge(std::string_view name) {
  for (size_t i = 0; i < kEdgeNames.size(); ++i)
    if (kEdgeNames[i] == name)
      return static_cast<ReleaseEdge>(i);
  return std::nullopt;
}

} // namespace spyre::sim
