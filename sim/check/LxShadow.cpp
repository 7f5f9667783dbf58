#include "sim/check/LxShadow.h"

#include <optional>

namespace spyre::sim {

LxShadow::LxShadow(int cores, int64_t sticksPerCore)
    : cells_(static_cast<size_t>(cores)), sticksPerCore_(sticksPerCore) {}

namespace {

/// Extends `pending` with stick `s` when it conflicts with the same earlier
/// access as the run so far; otherwise starts a run if there is none yet.
void note(std::optional<AccessConflict> &pending, AccessConflict::Kind kind,
          int64_t s, const Epoch &other, bool otherWasWrite) {
  if (!pending) {
    pending = AccessConflict{kind, s, s, other, otherWasWrite};
    return;
  }
  if (pending->lastStick == s - 1 && pending->other.stream == other.stream &&
      pending->other.instr == other.instr)
    pending->lastStick = s;
}

} // namespace

void LxShadow::access(int core, int64_t firstStick, int64_t count, bool isWrite,
                      const Epoch &e, const HappensBefore &hb,
                      std::vector<AccessConflict> &out) {
  std::vector<Cell> &cells = cells_[static_cast<size_t>(core)];
  // A core's shadow is made on its first access: a chip of many cores costs
  // host memory only for the cores a program uses.
  if (cells.empty())
    cells.resize(static_cast<size_t>(sticksPerCore_));
  std::optional<AccessConflict> race, uninit;
  for (int64_t s = firstStick; s < firstStick + count; ++s) {
    Cell &c = cells[static_cast<size_t>(s)];
    if (c.written && !hb.happensBefore(c.write, e.stream))
      note(race, AccessConflict::Kind::Race, s, c.write, true);
    if (isWrite) {
      for (const Epoch &r : c.reads)
        if (!hb.happensBefore(r, e.stream)) {
          note(race, AccessConflict::Kind::Race, s, r, false);
          break;
        }
      c.write = e;
      c.written = true;
      c.reads.clear();
      continue;
    }
    if (!c.written) {
      if (!uninit)
        uninit = AccessConflict{AccessConflict::Kind::UninitRead, s, s, {}, false};
      else if (uninit->lastStick == s - 1)
        uninit->lastStick = s;
    }
    bool replaced = false;
    for (Epoch &r : c.reads)
      if (r.stream == e.stream) {
        r = e;
        replaced = true;
        break;
      }
    if (!replaced)
      c.reads.push_back(e);
  }
  if (race)
    out.push_back(*race);
  if (uninit)
    out.push_back(*uninit);
}

} // namespace spyre::sim
