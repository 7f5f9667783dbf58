// The ISA reference (docs/isa.md), generated from the instruction table so
// that the documentation cannot drift from the encoder and the assembler.
#pragma once

#include <string>

namespace spyre::isa {

/// The full text of docs/isa.md.
std::string isaReferenceMarkdown();

} // namespace spyre::isa
