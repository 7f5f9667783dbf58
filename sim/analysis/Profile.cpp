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

std::string_view engineKind(std::string_view engine) {
  for (std::string_view unitKind : {std::string_view("pt"), std::string_view("sfu")})
    if (engine.size() > unitKind.size() && engine.substr(0, unitKind.size()) == unitKind &&
        engine[unitKind.size()] == '.')
      return engine.substr(0, unitKind.size());
  return engine;
}

} // namespace spyre::sim
