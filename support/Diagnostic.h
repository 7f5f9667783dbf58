// Diagnostics: the two error channels of the project.
//
// User errors (bad config, model, program, assembly, data file, CLI use) are
// `Diagnostic`s with a location, collected in a `DiagnosticEngine` or thrown
// once as a `UserError`; the CLI prints them as `file:line:col: error: msg`
// and exits with the code they carry. Internal errors (a broken invariant of
// our own code) go through `SPYRE_ASSERT`, which is never compiled out and
// aborts with context: they are bugs, not answers.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace spyre {

/// Process exit codes shared by every subcommand (documented in README.md).
enum class ExitCode : int {
  Ok = 0,
  BadInput = 1,     ///< config, model, program or data file is invalid
  Usage = 2,        ///< command line misuse
  VerifyFailed = 3, ///< wrong numbers or a failed schedule check
  Internal = 70,    ///< a bug in spyre (EX_SOFTWARE of sysexits.h)
};

/// Where a diagnostic points. `file` may be a path or a pseudo-name such as
/// `<built-in config>`; `line`/`col` are 1-based, 0 when unknown; `keyPath` is
/// a YAML/JSON key path (`pt.rows`) used when there is no line, or as context.
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;
  std::string keyPath;

  /// `file:line:col`, `file:line`, or `file` depending on what is known.
  std::string str() const;
};

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLoc loc;
  std::string message;
  /// Optional source line shown under the message with a caret at `loc.col`.
  std::string sourceLine;

  /// One line (`file:line:col: error: message`), plus the source line and a
  /// caret when `sourceLine` is set.
  std::string str() const;
};

/// A single user error thrown from deep inside a loader; caught at the CLI or
/// at an API boundary and turned into a diagnostic and exit code.
class UserError : public std::runtime_error {
public:
  UserError(Diagnostic diag, ExitCode code = ExitCode::BadInput);
  UserError(SourceLoc loc, const std::string &message,
            ExitCode code = ExitCode::BadInput);

  const Diagnostic &diagnostic() const { return diag_; }
  ExitCode exitCode() const { return code_; }

private:
  Diagnostic diag_;
  ExitCode code_;
};

/// Collects diagnostics in the order they were reported.
class DiagnosticEngine {
public:
  void error(SourceLoc loc, std::string message);
  void warning(SourceLoc loc, std::string message);
  void note(SourceLoc loc, std::string message);
  void report(Diagnostic diag);

  bool hasErrors() const { return errorCount_ > 0; }
  size_t errorCount() const { return errorCount_; }
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  /// All diagnostics, one `str()` per line.
  std::string str() const;
  /// Throws the first error as a UserError when there is one.
  void throwIfErrors(ExitCode code = ExitCode::BadInput) const;

private:
  std::vector<Diagnostic> diags_;
  size_t errorCount_ = 0;
};

/// Reports a broken internal invariant and aborts. Never returns.
[[noreturn]] void internalError(const char *file, int line, const char *cond,
                                const std::string &message);

} // namespace spyre

/// Internal invariant check, active in every build type. Use it for bugs in
/// our own code only; user input errors are Diagnostics.
#define SPYRE_ASSERT(cond, message)                                            \
  do {                                                                         \
    if (!(cond))                                                               \
      ::spyre::internalError(__FILE__, __LINE__, #cond, (message));            \
  } while (false)

#define SPYRE_UNREACHABLE(message)                                             \
  ::spyre::internalError(__FILE__, __LINE__, "unreachable", (message))
