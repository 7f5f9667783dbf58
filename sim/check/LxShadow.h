// Shadow state of every LX stick for the schedule checks: who wrote it last
// and who has read it since, as happens-before epochs. An access that
// conflicts with an earlier one (at least one of the two writing) without a
// happens-before edge is a race; a read of a stick never written is an
// uninitialised read.
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

private:
  struct Cell {
    Epoch write;
    bool written = false;
    std::vector<Epoch> reads; ///< one entry per stream since the last write
  };
  std::vector<std::vector<Cell>> cells_; ///< per core, empty until used
  int64_t sticksPerCore_;
};

} // namespace spyre::sim
