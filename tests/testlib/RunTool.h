// Runs the built `spyre` executable in a child process, as a user would, and
// captures its exit code, stdout and stderr.
#pragma once

#include <string>
#include <vector>

namespace spyre::test {

struct ToolResult {
  int exitCode = -1; ///< exit status, or 128 + signal number if killed
  std::string out;
  std::string err;
};

/// Runs `spyre args...` with the working directory set to `cwd` (the source
/// tree when empty) and optional bytes on standard input.
ToolResult runSpyre(const std::vector<std::string> &args,
                    const std::string &cwd = "", const std::string &stdinData = "");

/// Runs the executable `exe` likewise (a tool or example built with spyre).
ToolResult runExecutable(const std::string &exe,
                         const std::vector<std::string> &args,
                         const std::string &cwd = "",
                         const std::string &stdinData = "");

/// First line of a text (without the newline).
std::string firstLine(const std::string &text);

} // namespace spyre::test
