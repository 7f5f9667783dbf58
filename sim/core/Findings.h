// What the schedule checks find while a program runs. Each finding names the
// core, stream, instruction (index, text and source op), the address range and
// the conflicting instruction where there is one; any finding makes
// `spyre sim` exit with code 3.
#pragma once

#include "sim/timing/Time.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace spyre::sim {

enum class FindingKind {
  OutOfBounds,      ///< an access outside LX or device memory
  LxRace,           ///< conflicting LX accesses not ordered by happens-before
  LxUninitRead,     ///< a read of LX bytes never written
  MemUninitRead,    ///< a load from output/scratch memory never written
  Deadlock,         ///< a stream waits for something that never comes
  MaxCycles,        ///< the run passed --max-cycles
  MaxInstructions,  ///< the run passed the instruction budget
  MaxRecords,       ///< the run kept as many records as it may
  TransferMismatch, ///< a send and its matching receive differ in size
  InvalidOperand,   ///< an operand value the hardware cannot execute
  IndexOutOfRange,  ///< an `lr` value outside its [0, limit)
};

/// `out-of-bounds`, `lx-race`, ...: stable names used in stats JSON.
std::string_view findingKindName(FindingKind kind);

struct Finding {
  FindingKind kind = FindingKind::OutOfBounds;
  Cycle cycle = 0;
  int core = -1;
  std::string stream;       ///< e.g. `core 0 sfu.1`; empty for chip-wide
  int64_t instrIndex = -1;  ///< index in the stream, -1 when none
  std::string instrText;    ///< the instruction as assembly
  std::string sourceOp;     ///< provenance, empty when none
  std::string addressRange; ///< e.g. `lx[0x40, 0x48) sticks`
  std::string conflicting;  ///< the other instruction, for races
  std::string message;      ///< what went wrong, one sentence

  /// One line: `cycle 1234: lx-race: core 0 sfu.0 #5 (add ...) [op]: ...`.
  std::string str() const;
};

} // namespace spyre::sim
