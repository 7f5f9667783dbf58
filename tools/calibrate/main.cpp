// spyre-calibrate: runs the calibration programs on a hardware config and
// prints the markdown table of modelled against published figures that
// docs/calibration.md holds. Exit codes: 0 ok, 1 bad config, 2 usage.
#include "hw/HwConfig.h"
#include "sim/calibration/Calibration.h"
#include "support/Diagnostic.h"

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <string>

namespace {

int run(const std::string &configPath) {
  using namespace spyre;
  const hw::HwConfig config = hw::loadConfigOrDefault(configPath);
  if (auto why = sim::calibration::unsupportedReason(config)) {
    SourceLoc loc;
    loc.file = configPath.empty() ? "<built-in config>" : configPath;
    loc.keyPath = why->keyPath;
    throw UserError(loc, why->message);
  }
  std::cout << sim::calibration::calibrationTable(
      sim::calibration::calibrationFigures(config));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"spyre-calibrate: the calibration table of the timing model "
               "(docs/calibration.md)",
               "spyre-calibrate"};
  std::string configPath;
  app.add_option("--config", configPath,
                 "hardware config YAML (default: the built-in spyre.yaml)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::cerr << "spyre-calibrate: error: " << e.what() << "\n"
              << "Run with --help for more information.\n";
    return static_cast<int>(spyre::ExitCode::Usage);
  }
  try {
    return run(configPath);
  } catch (const spyre::UserError &e) {
    std::cout.flush();
    std::cerr << e.diagnostic().str() << "\n";
    return static_cast<int>(e.exitCode());
  }
}
