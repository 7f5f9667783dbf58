// Shadow state of every LX stick for the schedule checks: who wrote it last
// and who has read it since, as happens-before epochs. An access that
// conflicts with an earlier one (at least one of the two writing) without a
// happens-before edge is a race; a read of a stick never written is an
// uninitialised read.
//
// A stick's state is two 32-bit numbers, its last write and its readers
// since: an index into a table of the epochs accesses were made at (one per
// instruction run, shared by all its sticks), or for several readers a list
// of such indices from a shared pool. The check walks the sticks of every
// access, so the bytes per stick are what it costs; the table is compacted
// when it outgrows what the sticks still refer to.
//
// Sticks go in blocks of kBlockSticks. A block whose sticks all hold the
// same state keeps it once (its readers' list too), as tiles written by one
// instruction and read by one or several engines do; an access covering
// such a block checks and updates it in one step. An access that covers a
// block in part spreads the block's state to its sticks first (a list
// copied to each) and walks them; a write covering a block makes it
// uniform again. The conflicts are those of a stick-by-stick walk.
#pragma once

#include "sim/check/HappensBefore.h"

#include <cstddef>
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
  /// `compactAfter`: epochs the table holds before its first compaction
  /// (small in tests, to exercise it).
  LxShadow(int cores, int64_t sticksPerCore,
           std::size_t compactAfter = std::size_t{1} << 20);

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
  /// kNone, an epoch id, or (kList | id) a list of the readers' epoch ids
  /// in the order of their first reads.
  struct Cell {
    uint32_t write = kNone;
    uint32_t reads = kNone;
  };
  static constexpr uint32_t kNone = 0;
  static constexpr uint32_t kList = 0x80000000u;
  static constexpr int64_t kBlockSticks = 64;
  /// A block's state when `uniform` (its sticks' cells are then stale).
  struct Block {
    Cell cell;
    bool uniform = true;
  };
  struct Core {
    std::vector<Cell> cells;
    std::vector<Block> blocks;
  };

  /// The id of epoch `e` in the table (the last one of its stream when it is
  /// the same).
  uint32_t idOf(const Epoch &e);
  uint32_t newReadList();
  void freeReadList(uint32_t id);
  /// Rebuilds the epoch table with only the epochs the sticks refer to.
  void compact();

  std::vector<Core> cores_; ///< cells and blocks empty until used
  std::vector<Epoch> epochs_{Epoch{}};   ///< id 0 is kNone
  std::vector<uint32_t> lastIdOfStream_;
  /// Epoch ids of several readers, per list id; id 0 is never used.
  std::vector<std::vector<uint32_t>> readLists_{1};
  std::vector<uint32_t> freeLists_;
  std::size_t compactAt_;
  int64_t sticksPerCore_;
};

} // namespace spyre::sim
