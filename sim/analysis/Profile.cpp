// Names of the shared vocabulary and the string table of a Profile
// (Profile.h).
#include "sim/analysis/Profile.h"

#include "support/Diagnostic.h"

namespace spyre::sim {

namespace {

constexpr std::array<std::string_view, kNumStallReasons> kStallNames = {
    "signal", "remote_signal", "barrier",  "peer",
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

uint32_t Profile::intern(std::string_view name) {
  if (auto it = nameIndex_.find(name); it != nameIndex_.end())
    return it->second;
  auto id = static_cast<uint32_t>(names.size());
  names.emplace_back(name);
  nameIndex_.emplace(std::string(name), id);
  return id;
}

std::string_view Profile::nameOf(uint32_t id) const {
  if (id == kNoName)
    return {};
  SPYRE_ASSERT(id < names.size(), "name index outside the profile's table");
  return names[id];
}

std::string_view engineKind(std::string_view engine) {
  for (std::string_view unitKind : {std::string_view("pt"), std::string_view("sfu")})
    if (engine.size() > unitKind.size() && engine.substr(0, unitKind.size()) == unitKind &&
        engine[unitKind.size()] == '.')
      return engine.substr(0, unitKind.size());
  return engine;
}

} // namespace spyre::sim
