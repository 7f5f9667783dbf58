// The `spyre` command line: one executable, one subcommand per job. The work
// lives in the libraries; this file only parses, dispatches and maps errors
// to exit codes (0 ok, 1 bad input, 2 usage, 3 verification failure; any
// other code, or an abort, is a bug).
#include "Commands.h"
#include "Version.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <exception>
#include <iostream>

namespace {

int runCli(int argc, char **argv) {
  using namespace spyre;
  using cli::versionText;
  CLI::App app{"spyre: compiler and cycle-approximate simulator for the IBM "
               "Spyre AI accelerator",
               "spyre"};
  // CLI11 ends the version text with a newline of its own.
  app.set_version_flag("--version", [] {
                         std::string text = versionText();
                         text.pop_back();
                         return text;
                       },
                       "Print the version, git revision, ISA version, "
                       "built-in config fingerprint and library versions");
  app.require_subcommand(1);
  app.fallthrough(false);

  cli::Dispatch dispatch;
  cli::addConfigCommand(app, dispatch);
  cli::addDlf16Command(app, dispatch);
  cli::addAsmCommands(app, dispatch);
  cli::addSimCommand(app, dispatch);
  cli::addCompareCommand(app, dispatch);
  cli::addGraphCommand(app, dispatch);
  cli::addTraceCommand(app, dispatch);
  cli::addCompileCommand(app, dispatch);
  cli::addVerifyCommand(app, dispatch);
  cli::addReportCommand(app, dispatch);
  cli::addRunCommand(app, dispatch);
  cli::addLlmCommand(app, dispatch);
  cli::addServeCommand(app, dispatch);
  cli::addSweepCommand(app, dispatch);
  cli::addCompletionCommand(app, dispatch);

  // CLI11 reports an unknown command as "a subcommand is required"; name it.
  std::vector<std::string> commands;
  for (const CLI::App *sub : app.get_subcommands({}))
    commands.push_back(sub->get_name());
  if (argc > 1 && argv[1][0] != '-' &&
      std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
    std::string names;
    for (const std::string &c : commands)
      names += (names.empty() ? "" : ", ") + c;
    std::cerr << "spyre: error: unknown command '" << argv[1]
              << "' (commands: " << names << ")\n"
              << "Run with --help for more information.\n";
    return static_cast<int>(ExitCode::Usage);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::cerr << "spyre: error: " << e.what() << "\n"
              << "Run with --help for more information.\n";
    return static_cast<int>(ExitCode::Usage);
  }
  if (!dispatch.run) {
    std::cerr << "spyre: error: no command given\n";
    return static_cast<int>(ExitCode::Usage);
  }
  try {
    return dispatch.run();
  } catch (const UserError &e) {
    std::cout.flush();
    std::cerr << e.diagnostic().str() << "\n";
    return static_cast<int>(e.exitCode());
  }
}

} // namespace

namespace {

/// A command's answer is lost when standard output cannot take it (a full
/// disk, /dev/full): that is a failure even when the command succeeded.
int checkStdout(int code) {
  errno = 0;
  std::cout.flush();
  bool failed = std::fflush(stdout) != 0;
  int err = errno;
  if (!failed && !std::ferror(stdout) && std::cout.good())
    return code;
  std::fprintf(stderr, "spyre: error: cannot write standard output%s%s\n",
               err != 0 ? ": " : "", err != 0 ? std::strerror(err) : "");
  return code == 0 ? static_cast<int>(spyre::ExitCode::BadInput) : code;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return checkStdout(runCli(argc, argv));
  } catch (const std::exception &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "spyre: internal error: uncaught exception: %s\n",
                 e.what());
    return static_cast<int>(spyre::ExitCode::Internal);
  }
}
