#include "sim/core/Findings.h"

namespace spyre::sim {

std::string_view findingKindName(FindingKind kind) {
  switch (kind) {
  case FindingKind::OutOfBounds:
    return "out-of-bounds";
  case FindingKind::LxRace:
    return "lx-race";
  case FindingKind::LxUninitRead:
    return "lx-uninitialized-read";
  case FindingKind::MemUninitRead:
    return "memory-uninitialized-read";
  case FindingKind::Deadlock:
    return "deadlock";
  case FindingKind::MaxCycles:
    return "max-cycles";
  case FindingKind::MaxInstructions:
    return "max-instructions";
  case FindingKind::MaxRecords:
    return "max-records";
  case FindingKind::TransferMismatch:
    return "transfer-mismatch";
  case FindingKind::InvalidOperand:
    return "invalid-operand";
  case FindingKind::IndexOutOfRange:
    return "index-out-of-range";
  }
  return "unknown";
}

std::string Finding::str() const {
  std::string out = "cycle " + std::to_string(cycle) + ": " +
                    std::string(findingKindName(kind)) + ": ";
  if (!stream.empty()) {
    out += stream;
    if (instrIndex >= 0)
      out += " #" + std::to_string(instrIndex);
    if (!instrText.empty())
      out += " (" + instrText + ")";
    if (!sourceOp.empty())
      out += " [op " + sourceOp + "]";
    out += ": ";
  }
  out += message;
  if (!addressRange.empty())
    out += " at " + addressRange;
  if (!conflicting.empty())
    out += "; conflicts with " + conflicting;
  return out;
}

} // namespace spyre::sim
