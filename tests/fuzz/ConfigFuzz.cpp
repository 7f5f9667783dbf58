// Fuzz target `config`: the hardware-config loader on arbitrary YAML text.
// A config it accepts must validate again, print in canonical form and load
// back from that form to the same fingerprint (with or without comments),
// and must be usable: the example programs that assemble for it run on the
// simulator (SimCheck.h).
#include "FuzzTarget.h"
#include "SimCheck.h"

#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace spyre;

namespace {

/// examples/asm/*.s, read once.
const std::vector<std::string> &examplePrograms() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::filesystem::path> files;
    for (const auto &e : std::filesystem::directory_iterator(
             std::filesystem::path(SPYRE_SOURCE_DIR) / "examples/asm"))
      if (e.path().extension() == ".s")
        files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::vector<std::string> out;
    for (const auto &f : files) {
      std::ifstream in(f);
      std::ostringstream ss;
      ss << in.rdbuf();
      out.push_back(ss.str());
    }
    return out;
  }();
  return texts;
}

void checkReload(const hw::HwConfig &config, bool withComments) {
  std::string yaml = hw::toYaml(config, withComments);
  DiagnosticEngine diags;
  hw::HwConfig back;
  SPYRE_ASSERT(hw::parseConfig(yaml, "canonical.yaml", back, diags),
               "the canonical form of an accepted config does not load:\n" +
                   diags.str() + yaml);
  SPYRE_ASSERT(back.fingerprint() == config.fingerprint(),
               "an accepted config reloads from its canonical form with a "
               "different fingerprint:\n" + yaml);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DiagnosticEngine diags;
  hw::HwConfig config;
  try {
    if (!hw::parseConfig(fuzz::asText(data, size), "fuzz.yaml", config, diags))
      return 0;
  } catch (const UserError &) {
    return 0;
  }
  SPYRE_ASSERT(!diags.hasErrors(), "parseConfig succeeded with errors");
  DiagnosticEngine again;
  SPYRE_ASSERT(hw::validateConfig(config, "fuzz.yaml", again),
               "an accepted config fails validation:\n" + again.str());
  checkReload(config, false);
  checkReload(config, true);

  for (const std::string &text : examplePrograms()) {
    DiagnosticEngine asmDiags;
    isa::Program program;
    try {
      program = isa::assemble(text, "example.s", config, asmDiags);
    } catch (const UserError &) {
      continue;
    }
    if (asmDiags.hasErrors())
      continue;
    fuzz::checkSimulation(config, program);
  }
  return 0;
}
