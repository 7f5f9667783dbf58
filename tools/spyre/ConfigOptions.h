// The options that choose the hardware config, spelled the same on every
// command that takes one: `--config FILE` and `--set KEY=VALUE` (repeatable,
// applied in order over the file or the built-in config; docs/config.md).
#pragma once

#include "hw/HwConfig.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace spyre::cli {

/// Adds `--set` to `cmd`, filling `settings`.
inline void addSetOption(CLI::App *cmd, std::vector<std::string> &settings,
                         const std::string &over = "the config") {
  // One KEY=VALUE per --set, so that a setting never swallows a positional
  // argument that follows it.
  cmd->add_option("--set", settings,
                  "Set one config key over " + over +
                      ", KEY=VALUE as `spyre config show` prints it (e.g. "
                      "memory.peak_gb_per_s=409.6); repeatable")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
}

/// Adds `--config-root` to `cmd`, filling `root`.
inline void addConfigRootOption(CLI::App *cmd, std::string &root) {
  cmd->add_option("--config-root", root,
                  "Folder the config's bases (`base:`) may be read from, it "
                  "and below (default: the config file's folder)")
      ->type_name("DIR")
      ->check(CLI::ExistingDirectory);
}

/// Adds `--config`, `--config-root` and `--set` to `cmd`, filling `source`.
inline void addConfigOptions(CLI::App *cmd, hw::ConfigSource &source) {
  cmd->add_option("--config", source.path,
                  "Hardware config YAML (default: the built-in Spyre config)");
  addConfigRootOption(cmd, source.baseRoot);
  addSetOption(cmd, source.settings);
}

/// How a message names the config of `source`: the file or `(built-in)`,
/// with its settings.
inline std::string describeConfig(const hw::ConfigSource &source) {
  std::string out =
      source.path.empty() ? std::string("(built-in)") : source.path;
  for (const std::string &s : source.settings)
    out += " --set " + s;
  return out;
}

} // namespace spyre::cli
