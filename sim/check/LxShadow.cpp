#include "sim/check/LxShadow.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <optional>

namespace spyre::sim {

LxShadow::LxShadow(int cores, int64_t sticksPerCore, std::size_t compactAfter)
    : cores_(static_cast<size_t>(cores)), compactAt_(compactAfter),
      sticksPerCore_(sticksPerCore) {}

namespace {

/// Extends `pending` with the sticks [lo, hi] when they conflict with the
/// same earlier access as the run so far and follow it; otherwise starts a
/// run if there is none yet. (For sticks of equal state, in order, this is
/// what noting them one by one gives.)
void note(std::optional<AccessConflict> &pending, AccessConflict::Kind kind,
          int64_t lo, int64_t hi, const Epoch &other, bool otherWasWrite) {
  if (!pending) {
    pending = AccessConflict{kind, lo, hi, other, otherWasWrite};
    return;
  }
  if (pending->lastStick == lo - 1 && pending->other.stream == other.stream &&
      pending->other.instr == other.instr)
    pending->lastStick = hi;
}

void noteUninit(std::optional<AccessConflict> &pending, int64_t lo, int64_t hi) {
  if (!pending)
    pending = AccessConflict{AccessConflict::Kind::UninitRead, lo, hi, {}, false};
  else if (pending->lastStick == lo - 1)
    pending->lastStick = hi;
}

bool sameEpoch(const Epoch &a, const Epoch &b) {
  return a.clock == b.clock && a.instr == b.instr && a.stream == b.stream;
}

} // namespace

uint32_t LxShadow::idOf(const Epoch &e) {
  if (epochs_.size() >= compactAt_)
    compact();
  if (lastIdOfStream_.size() <= e.stream)
    lastIdOfStream_.resize(static_cast<size_t>(e.stream) + 1, kNone);
  uint32_t &last = lastIdOfStream_[e.stream];
  if (last != kNone && sameEpoch(epochs_[last], e))
    return last;
  SPYRE_ASSERT(epochs_.size() < kList, "too many LX access epochs");
  epochs_.push_back(e);
  last = static_cast<uint32_t>(epochs_.size() - 1);
  return last;
}

uint32_t LxShadow::newReadList() {
  if (!freeLists_.empty()) {
    uint32_t id = freeLists_.back();
    freeLists_.pop_back();
    return id;
  }
  SPYRE_ASSERT(readLists_.size() < kList, "too many LX reader lists");
  readLists_.emplace_back();
  return static_cast<uint32_t>(readLists_.size() - 1);
}

void LxShadow::freeReadList(uint32_t id) {
  readLists_[id].clear(); // keeps its storage for the next
  freeLists_.push_back(id);
}

void LxShadow::compact() {
  std::vector<uint32_t> remap(epochs_.size(), kNone);
  std::vector<Epoch> kept{Epoch{}};
  auto keep = [&](uint32_t &id) {
    if (id == kNone)
      return;
    if (remap[id] == kNone) {
      kept.push_back(epochs_[id]);
      remap[id] = static_cast<uint32_t>(kept.size() - 1);
    }
    id = remap[id];
  };
  auto keepCell = [&](Cell &c) {
    keep(c.write);
    if (!(c.reads & kList))
      keep(c.reads);
  };
  for (Core &core : cores_)
    for (size_t b = 0; b < core.blocks.size(); ++b) {
      Block &block = core.blocks[b];
      if (block.uniform) {
        keepCell(block.cell);
        continue;
      }
      const size_t end = std::min(core.cells.size(), (b + 1) * kBlockSticks);
      for (size_t i = b * kBlockSticks; i < end; ++i)
        keepCell(core.cells[i]);
    }
  for (std::vector<uint32_t> &list : readLists_)
    for (uint32_t &id : list)
      keep(id);
  for (uint32_t &id : lastIdOfStream_)
    keep(id);
  epochs_ = std::move(kept);
  compactAt_ = std::max(compactAt_, 2 * epochs_.size());
}

void LxShadow::access(int core, int64_t firstStick, int64_t count, bool isWrite,
                      const Epoch &e, const HappensBefore &hb,
                      std::vector<AccessConflict> &out) {
  Core &shadow = cores_[static_cast<size_t>(core)];
  // A core's shadow is made on its first access: a chip of many cores costs
  // host memory only for the cores a program uses.
  if (shadow.cells.empty()) {
    shadow.cells.resize(static_cast<size_t>(sticksPerCore_));
    shadow.blocks.resize(
        static_cast<size_t>((sticksPerCore_ + kBlockSticks - 1) / kBlockSticks));
  }
  const uint32_t id = idOf(e);
  // Neighbouring sticks were mostly last touched by the same access: its
  // ordering and stream are looked up once.
  uint32_t orderedId = kNone;
  bool orderedAnswer = true;
  auto ordered = [&](uint32_t other) {
    if (other != orderedId) {
      orderedId = other;
      orderedAnswer = hb.happensBefore(epochs_[other], e.stream);
    }
    return orderedAnswer;
  };
  uint32_t streamId = kNone;
  bool streamSame = false;
  auto sameStream = [&](uint32_t other) {
    if (other != streamId) {
      streamId = other;
      streamSame = epochs_[other].stream == e.stream;
    }
    return streamSame;
  };
  std::optional<AccessConflict> race, uninit;
  // What the last visit noted, for repeating it (below): a race with the
  // cell's write, a race with its one reader, an uninitialised read.
  constexpr unsigned kRaceWrite = 1, kRaceRead = 2, kUninit = 4;
  unsigned noted = 0;

  // Checks and updates the sticks [lo, hi] that share the state `c`.
  auto visit = [&](Cell &c, int64_t lo, int64_t hi) {
    noted = 0;
    if (c.write != kNone && !ordered(c.write)) {
      note(race, AccessConflict::Kind::Race, lo, hi, epochs_[c.write], true);
      noted |= kRaceWrite;
    }
    if (isWrite) {
      if (c.reads & kList) {
        const uint32_t list = c.reads & ~kList;
        for (uint32_t r : readLists_[list])
          if (!ordered(r)) {
            note(race, AccessConflict::Kind::Race, lo, hi, epochs_[r], false);
            break;
          }
        freeReadList(list);
      } else if (c.reads != kNone && !ordered(c.reads)) {
        note(race, AccessConflict::Kind::Race, lo, hi, epochs_[c.reads], false);
        noted |= kRaceRead;
      }
      c.reads = kNone;
      c.write = id;
      return;
    }
    if (c.write == kNone) {
      noteUninit(uninit, lo, hi);
      noted |= kUninit;
    }
    if (c.reads == kNone || (!(c.reads & kList) && sameStream(c.reads))) {
      c.reads = id;
      return;
    }
    if (!(c.reads & kList)) {
      const uint32_t list = newReadList();
      readLists_[list] = {c.reads, id};
      c.reads = kList | list;
      return;
    }
    std::vector<uint32_t> &readers = readLists_[c.reads & ~kList];
    for (uint32_t &r : readers)
      if (epochs_[r].stream == e.stream) {
        r = id;
        return;
      }
    readers.push_back(id);
  };

  const int64_t end = firstStick + count;
  for (int64_t lo = firstStick; lo < end;) {
    const int64_t b = lo / kBlockSticks;
    const int64_t blockLo = b * kBlockSticks;
    const int64_t blockEnd = std::min(blockLo + kBlockSticks, sticksPerCore_);
    const int64_t hi = std::min(end, blockEnd); // this part: [lo, hi)
    Block &block = shadow.blocks[static_cast<size_t>(b)];
    const bool whole = lo == blockLo && hi == blockEnd;
    // (A block that is not uniform keeps a stale state, never looked at.)
    if (block.uniform && whole) {
      visit(block.cell, lo, hi - 1);
      lo = hi;
      continue;
    }
    if (block.uniform) {
      std::fill(shadow.cells.begin() + blockLo, shadow.cells.begin() + blockEnd,
                block.cell);
      // A reader list is the block's: its first stick keeps it, the others
      // get copies.
      if (block.cell.reads & kList) {
        const uint32_t list = block.cell.reads & ~kList;
        for (int64_t s = blockLo + 1; s < blockEnd; ++s) {
          const uint32_t copy = newReadList();
          readLists_[copy] = readLists_[list];
          shadow.cells[static_cast<size_t>(s)].reads = kList | copy;
        }
      }
      block.uniform = false;
    }
    // Neighbouring sticks mostly hold the same state, and a state with no
    // reader list goes to the same new state with the same conflicts: the
    // first stick of such a run is visited, the others repeat its outcome.
    Cell before, after;
    bool repeatable = false;
    for (int64_t s = lo; s < hi; ++s) {
      Cell &c = shadow.cells[static_cast<size_t>(s)];
      if (repeatable && c.write == before.write && c.reads == before.reads) {
        c = after;
        if (noted & kRaceWrite)
          note(race, AccessConflict::Kind::Race, s, s, epochs_[before.write],
               true);
        if (noted & kRaceRead)
          note(race, AccessConflict::Kind::Race, s, s, epochs_[before.reads],
               false);
        if (noted & kUninit)
          noteUninit(uninit, s, s);
        continue;
      }
      before = c;
      visit(c, s, s);
      after = c;
      repeatable = !(before.reads & kList) && !(after.reads & kList);
    }
    if (whole && isWrite) {
      block.cell = Cell{id, kNone};
      block.uniform = true;
    }
    lo = hi;
  }
  if (race)
    out.push_back(*race);
  if (uninit)
    out.push_back(*uninit);
}

} // namespace spyre::sim
