// Fuzz target `program`: the program-file reader on arbitrary bytes.
//
// Almost every mutation would break the checksum and stop at it, so the
// target first makes the header's payload size and CRC-32 agree with the
// bytes (docs/program-file.md): the fuzzer then reaches the sections,
// tensors and instructions behind a valid checksum, as a crafted file would.
// A file the reader accepts must write back and read again to the same
// program and must disassemble; when it was built for the built-in config
// (as the assembled seeds are) and fits it, it must also run on the
// simulator the way `spyre sim` runs it (SimCheck.h).
#include "FuzzTarget.h"
#include "SimCheck.h"

#include "hw/HwConfig.h"
#include "isa/Disassembler.h"
#include "isa/Program.h"
#include "support/Diagnostic.h"
#include "support/Hash.h"

#include <string>

using namespace spyre;

namespace {

constexpr size_t kPayloadSizeAt = 24;
constexpr size_t kCrcAt = 32;

void putLe(std::string &bytes, size_t at, int n, uint64_t v) {
  for (int i = 0; i < n; ++i)
    bytes[at + static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

void fixHeader(std::string &bytes) {
  if (bytes.size() < isa::kHeaderBytes)
    return;
  putLe(bytes, kPayloadSizeAt, 8, bytes.size() - isa::kHeaderBytes);
  putLe(bytes, kCrcAt, 4, 0);
  putLe(bytes, kCrcAt, 4, crc32(bytes.data(), bytes.size()));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(fuzz::asText(data, size));
  fixHeader(bytes);
  isa::Program program;
  try {
    program = isa::readProgram(bytes, "fuzz.spyre");
  } catch (const UserError &) {
    return 0;
  }

  try {
    SPYRE_ASSERT(isa::readProgram(isa::writeProgram(program), "fuzz2.spyre") ==
                     program,
                 "a program read from a file reads back changed after writing");
  } catch (const UserError &e) {
    SPYRE_UNREACHABLE(std::string("a program read from a file does not read "
                                  "back after writing: ") + e.what());
  }
  isa::disassemble(program);

  // What `spyre sim` checks before it runs a file.
  const hw::HwConfig &config = hw::builtinConfig();
  if (program.configFingerprint != config.fingerprint() ||
      !isa::checkProgramFits(program, config).empty())
    return 0;
  fuzz::checkSimulation(config, program);
  return 0;
}
