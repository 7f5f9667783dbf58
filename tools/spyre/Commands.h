// Subcommands of the `spyre` CLI. Each `add*Command` registers one or more
// CLI11 subcommands on `app`; when a subcommand is chosen its runner is stored
// in `run`, and main() calls it after parsing. A runner returns the process
// exit code (see ExitCode) and reports user errors by throwing UserError.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace spyre::cli {

using Runner = std::function<int()>;

/// What the chosen subcommand will do once parsing has succeeded.
struct Dispatch {
  Runner run;
};

void addConfigCommand(CLI::App &app, Dispatch &dispatch);
void addDlf16Command(CLI::App &app, Dispatch &dispatch);
void addAsmCommands(CLI::App &app, Dispatch &dispatch);
void addSimCommand(CLI::App &app, Dispatch &dispatch);
void addCompareCommand(CLI::App &app, Dispatch &dispatch);
void addGraphCommand(CLI::App &app, Dispatch &dispatch);
void addTraceCommand(CLI::App &app, Dispatch &dispatch);
void addCompileCommand(CLI::App &app, Dispatch &dispatch);
void addVerifyCommand(CLI::App &app, Dispatch &dispatch);
void addReportCommand(CLI::App &app, Dispatch &dispatch);
void addRunCommand(CLI::App &app, Dispatch &dispatch);
void addSweepCommand(CLI::App &app, Dispatch &dispatch);
void addLlmCommand(CLI::App &app, Dispatch &dispatch);
void addServeCommand(CLI::App &app, Dispatch &dispatch);
/// `spyre completion bash`; registered last, it reads the whole tree.
void addCompletionCommand(CLI::App &app, Dispatch &dispatch);

} // namespace spyre::cli
