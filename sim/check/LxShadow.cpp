#include "sim/check/LxShadow.h"

#include "support/Diagnostic.h"

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

uint32_t LxShadow::newReadList() {
  if (!freeLists_.empty()) {
    uint32_t id = freeLists_.back();
    freeLists_.pop_back();
    return id;
  }
  SPYRE_ASSERT(readLists_.size() < UINT32_MAX, "too many LX reader lists");
  readLists_.emplace_back();
  return static_cast<uint32_t>(readLists_.size() - 1);
}

void LxShadow::freeReadList(uint32_t id) {
  readLists_[id].clear(); // keeps its storage for the next
  freeLists_.push_back(id);
}

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
      if (c.hasRead) {
        if (!hb.happensBefore(c.firstRead, e.stream)) {
          note(race, AccessConflict::Kind::Race, s, c.firstRead, false);
        } else if (c.moreReads != 0) {
          for (const Epoch &r : readLists_[c.moreReads])
            if (!hb.happensBefore(r, e.stream)) {
              note(race, AccessConflict::Kind::Race, s, r, false);
              break;
            }
        }
        if (c.moreReads != 0)
          freeReadList(c.moreReads);
        c.moreReads = 0;
        c.hasRead = false;
      }
      c.write = e;
      c.written = true;
      continue;
    }
    if (!c.written) {
      if (!uninit)
        uninit = AccessConflict{AccessConflict::Kind::UninitRead, s, s, {}, false};
      else if (uninit->lastStick == s - 1)
        uninit->lastStick = s;
    }
    if (!c.hasRead || c.firstRead.stream == e.stream) {
      c.firstRead = e;
      c.hasRead = true;
      continue;
    }
    if (c.moreReads == 0)
      c.moreReads = newReadList();
    std::vector<Epoch> &more = readLists_[c.moreReads];
    bool replaced = false;
    for (Epoch &r : more)
      if (r.stream == e.stream) {
        r = e;
        replaced = true;
        break;
      }
    if (!replaced)
      more.push_back(e);
  }
  if (race)
    out.push_back(*race);
  if (uninit)
    out.push_back(*uninit);
}

} // namespace spyre::sim
