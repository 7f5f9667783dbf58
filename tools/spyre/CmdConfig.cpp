// `spyre config show|check|fingerprint`: print the effective hardware config,
// check a config file (every error, one per line), or print a fingerprint.
#include "Commands.h"
#include "ConfigOptions.h"

#include "hw/HwConfig.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <iostream>
#include <memory>

namespace spyre::cli {

namespace {

struct ConfigOptions {
  hw::ConfigSource source;
};

int runShow(const ConfigOptions &opts) {
  hw::HwConfig config = hw::loadConfig(opts.source);
  std::cout << hw::toYaml(config, true);
  return static_cast<int>(ExitCode::Ok);
}

int runCheck(const ConfigOptions &opts) {
  const std::string &path = opts.source.path;
  std::string text = readFile(path, kConfigFileLimit);
  hw::HwConfig config;
  DiagnosticEngine diags;
  if (!hw::parseConfig(text, path, config, diags, opts.source.baseRoot)) {
    std::cerr << diags.str();
    return static_cast<int>(ExitCode::BadInput);
  }
  std::cout << path << ": ok (fingerprint "
            << hw::fingerprintString(config.fingerprint()) << ")\n";
  return static_cast<int>(ExitCode::Ok);
}

int runFingerprint(const ConfigOptions &opts) {
  hw::HwConfig config = hw::loadConfig(opts.source);
  std::cout << hw::fingerprintString(config.fingerprint()) << "\n";
  return static_cast<int>(ExitCode::Ok);
}

/// Registers one subcommand of `config` whose runner is `run(opts)`.
CLI::App *addRunner(CLI::App *parent, Dispatch &dispatch, const char *name,
                    const char *help, int (*run)(const ConfigOptions &)) {
  // Shared with the runner, which outlives this function.
  auto opts = std::make_shared<ConfigOptions>();
  CLI::App *cmd = parent->add_subcommand(name, help);
  cmd->callback([&dispatch, opts, run] {
    dispatch.run = [opts, run] { return run(*opts); };
  });
  addConfigOptions(cmd, opts->source);
  return cmd;
}

} // namespace

void addConfigCommand(CLI::App &app, Dispatch &dispatch) {
  CLI::App *config = app.add_subcommand(
      "config", "Show, check or fingerprint a hardware config");
  config->require_subcommand(1);

  addRunner(config, dispatch, "show",
            "Print the effective config as commented canonical YAML", runShow);
  addRunner(config, dispatch, "fingerprint",
            "Print the config's fingerprint (0x + 16 hex digits)",
            runFingerprint);

  auto checkOpts = std::make_shared<ConfigOptions>();
  CLI::App *check = config->add_subcommand(
      "check", "Check a config file and report every problem in it");
  check->add_option("file", checkOpts->source.path, "Hardware config YAML file")
      ->required();
  addConfigRootOption(check, checkOpts->source.baseRoot);
  check->callback([&dispatch, checkOpts] {
    dispatch.run = [checkOpts] { return runCheck(*checkOpts); };
  });
}

} // namespace spyre::cli
