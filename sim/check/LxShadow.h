// Shadow state of every LX stick for the schedule checks: who wrote it last
// and who has read it since, as happens-before epochs. An access that
// conflicts with an earlier one (at least one of the two writing) without a
// happens-before edge is a race; a read of a stick never written is an
// uninitialised read.
//
// A stick keeps its last write and its first reader since in place (most
// sticks are read by one stream between writes: a PT or SFU engine, or the
// store engine); the readers after the first, rare, go to a shared pool, so
// the check allocates nothing per access.
#pragma once

#include "sim/check/HappensBefore.h"

#include <cstdint>
#include <vector>

namespace spyre::sim {

struct AccessConflict {
  enum class Kind { Race, UninitRead };
  Kind kind = Kind::Race;
  int64_t firstStick = 0; ///< first conflicting stick of the access
  int64_t lastStick = 0;  ///< last conflicting stick (same other access)
  Epoch other;            ///< the earlier access (Race only)
  bool otherWasWrite = false;
};

class LxShadow {
public:
  LxShadow(int cores, int64_t sticksPerCore);

  /// Checks an access of `count` sticks from `firstStick` in `core`'s LX by
  /// the stream and instruction of `e`, then records it. Appends at most one
  /// race and one uninitialised-read conflict per call (the first found,
  /// with the run of sticks that share it).
  void access(int core, int64_t firstStick, int64_t count, bool isWrite,
              const Epoch &e, const HappensBefore &hb,
              std::vector<AccessConflict> &out);
  /// `access` for each of `runs` runs of `count` sticks, run k from
  /// firstStick + k * stride, in that order (conflicts per run).
  void accessRuns(int core, int64_t firstStick, int64_t count, int64_t runs,
                  int64_t stride, bool isWrite, const Epoch &e,
                  const HappensBefore &hb, std::vector<AccessConflict> &out) {
    for (int64_t k = 0; k < runs; ++k)
      access(core, firstStick + k * stride, count, isWrite, e, hb, out);
  }

private:
  /// One entry per stream that read the stick since its last write, in the
  /// order of their first reads: `firstRead` (when `hasRead`), then the
  /// pool's list `moreReads` (0: none).
  struct Cell {
    Epoch write;
    Epoch firstRead;
    uint32_t moreReads = 0;
    bool written = false;
    bool hasRead = false;
  };
  uint32_t newReadList();
  void freeReadList(uint32_t id);

  std::vector<std::vector<Cell>> cells_; ///< per core, empty until used
  /// Readers after the first, per list id; id 0 is never used.
  std::vector<std::vector<Epoch>> readLists_{1};
  std::vector<uint32_t> freeLists_;
  int64_t sticksPerCore_;
};

} // namespace spyre::sim
