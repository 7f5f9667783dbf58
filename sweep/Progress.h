// What both sweep backends show while they wait: the progress line
// (`[done/total] R running, F failed, eta T`, redrawn in place on a
// terminal) and the SIGINT/SIGTERM guard that lets Ctrl-C stop a sweep
// with a message instead of killing the process mid-line.
#pragma once

#include <csignal>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace spyre::sweep {

/// The exit code of a sweep stopped by SIGINT or SIGTERM (128 + SIGINT, as
/// shells report an interrupted command).
constexpr int kInterruptedExit = 130;

/// Catches SIGINT and SIGTERM for its lifetime (no SA_RESTART, so a sleep
/// returns early) and restores the previous handlers after.
class InterruptGuard {
public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard &) = delete;
  InterruptGuard &operator=(const InterruptGuard &) = delete;

  /// Whether a signal came (or interrupt() was called) since construction.
  static bool interrupted();
  /// Marks the sweep interrupted, e.g. when a child was stopped by a
  /// signal that reached the whole process group.
  static void interrupt();

private:
  struct sigaction oldInt_ {};
  struct sigaction oldTerm_ {};
};

class Progress {
public:
  /// `jobs`: points run at once, for the estimate.
  Progress(std::ostream &out, bool terminal, size_t total, int jobs)
      : out_(out), terminal_(terminal), total_(total), jobs_(jobs) {}

  /// Shows the line unless it is the one shown last. `walls`: wall seconds
  /// of the points finished in this run (the estimate is their mean).
  void show(size_t done, size_t running, size_t failed,
            const std::vector<double> &walls);
  /// Ends a line redrawn in place.
  void finish();

private:
  std::ostream &out_;
  bool terminal_;
  size_t total_;
  int jobs_;
  std::string last_;
};

} // namespace spyre::sweep
