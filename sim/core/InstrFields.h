// The positions of the instruction fields the Machine's parts read, resolved
// once from the ISA table so that nothing in the simulator repeats the
// table's field order.
#pragma once

#include "isa/Program.h"

#include <array>
#include <cstdint>

namespace spyre::sim {

struct InstrFields {
  int liRd, liImm, addiRd, addiRs, addiImm, loopCount, loopBody;
  int sigCounter, sigValue, sigCore, waitCounter, waitValue, barId, barCount;
  int ringCore, mmM, mmK, mmN;
  int xposeM, xposeK;
  int hostOp;
  int cvtTo;
  /// Per opcode: the position of its `n` (sticks per row), `m` (rows) and
  /// `fmt` (element format) fields, -1 where it has none; looked up once,
  /// not per instruction.
  std::array<int8_t, 256> rowSticks{}, rows{}, fmt{};

  InstrFields();
};

/// The one table of field positions (inline: read on every instruction).
inline const InstrFields &instrFields() {
  static const InstrFields f;
  return f;
}

/// n sticks per row times m rows, for the instructions that have those
/// fields (a missing one counts as 1).
uint64_t rowSticksOf(const isa::Instr &r);

} // namespace spyre::sim
