// The string table of a Profile (Profile.h).
#include "sim/analysis/Profile.h"

#include "support/Diagnostic.h"

namespace spyre::sim {

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

void ProfileRecords::read(size_t first, std::span<RecordView> out) const {
  SPYRE_ASSERT(first + out.size() <= p_.records.size(),
               "records read past the profile's end");
  for (size_t i = 0; i < out.size(); ++i) {
    const InstrRecord &r = p_.records[first + i];
    RecordView &v = out[i];
    v.stream = r.stream;
    v.mnemonic = r.mnemonic;
    v.op = r.op;
    v.start = r.start;
    v.end = r.end;
    v.ready = r.ready;
    v.busy = r.busy;
    v.bandwidthStall = r.stall[static_cast<size_t>(StallReason::Memory)] +
                       r.stall[static_cast<size_t>(StallReason::Ring)] +
                       r.stall[static_cast<size_t>(StallReason::DmaSlots)];
    v.releasedBy = r.releasedBy;
    v.edge = r.edge;
    v.bytes = r.bytes;
    v.macs = r.macs;
    v.sticks = r.sticks;
  }
}

std::string_view engineKind(std::string_view engine) {
  for (std::string_view unitKind : {std::string_view("pt"), std::string_view("sfu")})
    if (engine.size() > unitKind.size() && engine.substr(0, unitKind.size()) == unitKind &&
        engine[unitKind.size()] == '.')
      return engine.substr(0, unitKind.size());
  return engine;
}

} // namespace spyre::sim
