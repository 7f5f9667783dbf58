#include "support/Diagnostic.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace spyre {

std::string SourceLoc::str() const {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (col > 0)
      out += ":" + std::to_string(col);
  }
  return out;
}

static const char *severityName(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

std::string Diagnostic::str() const {
  std::string out = loc.str() + ": " + severityName(severity) + ": ";
  // Without a line number the key path is the only way to find the spot.
  if (!loc.keyPath.empty() && loc.line == 0)
    out += "at '" + loc.keyPath + "': ";
  out += message;
  if (sourceLine.empty())
    return out;
  // A line of hostile input can be megabytes long: only a window around the
  // column is shown, with "..." where it is cut.
  constexpr size_t kShownColumns = 160;
  const size_t caret = loc.col > 0 ? static_cast<size_t>(loc.col - 1) : 0;
  size_t begin = 0;
  if (sourceLine.size() > kShownColumns && caret > kShownColumns / 2)
    begin = std::min(caret - kShownColumns / 2,
                     sourceLine.size() - kShownColumns);
  const std::string before = begin > 0 ? "..." : "";
  const std::string after =
      sourceLine.size() - begin > kShownColumns ? "..." : "";
  out += "\n" + before + sourceLine.substr(begin, kShownColumns) + after;
  if (loc.col > 0)
    out += "\n" + std::string(before.size() + caret - begin, ' ') + "^";
  return out;
}

UserError::UserError(Diagnostic diag, ExitCode code)
    : std::runtime_error(diag.str()), diag_(std::move(diag)), code_(code) {}

UserError::UserError(SourceLoc loc, const std::string &message, ExitCode code)
    : UserError(Diagnostic{Severity::Error, std::move(loc), message, {}},
                code) {}

void DiagnosticEngine::error(SourceLoc loc, std::string message) {
  report({Severity::Error, std::move(loc), std::move(message), {}});
}

void DiagnosticEngine::warning(SourceLoc loc, std::string message) {
  report({Severity::Warning, std::move(loc), std::move(message), {}});
}

void DiagnosticEngine::note(SourceLoc loc, std::string message) {
  report({Severity::Note, std::move(loc), std::move(message), {}});
}

void DiagnosticEngine::report(Diagnostic diag) {
  if (diag.severity == Severity::Error)
    ++errorCount_;
  diags_.push_back(std::move(diag));
}

std::string DiagnosticEngine::str() const {
  std::string out;
  for (const Diagnostic &d : diags_)
    out += d.str() + "\n";
  return out;
}

void DiagnosticEngine::throwIfErrors(ExitCode code) const {
  for (const Diagnostic &d : diags_)
    if (d.severity == Severity::Error)
      throw UserError(d, code);
}

void internalError(const char *file, int line, const char *cond,
                   const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "spyre: internal error: %s:%d: %s (%s)\n", file, line,
               message.c_str(), cond);
  std::fflush(stderr);
  std::abort();
}

} // namespace spyre
