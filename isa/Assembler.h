// The assembler: Spyre assembly text (docs/assembly.md) to a Program.
#pragma once

#include "isa/Program.h"
#include "support/Diagnostic.h"

#include <string>
#include <string_view>

namespace spyre::hw {
struct HwConfig;
}

namespace spyre::isa {

/// Assembles `text` for the hardware described by `config` (unit counts,
/// LX and memory sizes, sync limits; its fingerprint is stamped into the
/// program). Every problem is reported to `diags` as a located error with the
/// source line and a caret; assembly goes on after an error so one run shows
/// several. The returned program is only meaningful when no error was
/// reported.
Program assemble(std::string_view text, const std::string &fileName,
                 const hw::HwConfig &config, DiagnosticEngine &diags);

} // namespace spyre::isa
