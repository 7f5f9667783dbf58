// Fuzz target `asm`: the assembler on arbitrary text, with the built-in
// config. Text that assembles must also keep the documented round trips: the
// program file reads back to the same program, and the disassembly
// reassembles to identical bytes (isa/Disassembler.h).
#include "FuzzTarget.h"

#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "isa/Disassembler.h"
#include "isa/Program.h"
#include "support/Diagnostic.h"

#include <string>

using namespace spyre;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const hw::HwConfig &config = hw::builtinConfig();
  DiagnosticEngine diags;
  isa::Program program;
  try {
    program = isa::assemble(fuzz::asText(data, size), "fuzz.s", config, diags);
  } catch (const UserError &) {
    return 0;
  }
  if (diags.hasErrors())
    return 0;

  std::string bytes = isa::writeProgram(program);
  try {
    SPYRE_ASSERT(isa::readProgram(bytes, "fuzz.spyre") == program,
                 "an assembled program reads back from its file changed");
  } catch (const UserError &e) {
    SPYRE_UNREACHABLE(std::string("the file of an assembled program does not "
                                  "read back: ") + e.what());
  }

  std::string text = isa::disassemble(program);
  DiagnosticEngine again;
  isa::Program reassembled = isa::assemble(text, "fuzz.dis.s", config, again);
  SPYRE_ASSERT(!again.hasErrors(),
               "the disassembly does not assemble:\n" + again.str() + text);
  SPYRE_ASSERT(isa::writeProgram(reassembled) == bytes,
               "the disassembly reassembles to different bytes:\n" + text);
  return 0;
}
