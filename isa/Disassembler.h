// The disassembler: a Program back to canonical assembly text.
#pragma once

#include "isa/Program.h"

#include <string>

namespace spyre::isa {

/// Canonical assembly of a program: `.program`, then the tensors, then the
/// streams in (core, engine, unit) order with fixed spacing, hex addresses,
/// keyword operands only where they differ from their default, `.op` where
/// the source op changes and loop labels L0, L1, ... per stream. Assembling
/// the text with the same config gives back identical bytes.
std::string disassemble(const Program &program);

} // namespace spyre::isa
