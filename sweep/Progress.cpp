// The sweep backends' progress line and interrupt guard (Progress.h).
#include "sweep/Progress.h"

#include <fmt/format.h>

namespace spyre::sweep {

namespace {

volatile std::sig_atomic_t gInterrupted = 0;

extern "C" void onSweepInterrupt(int) { gInterrupted = 1; }

} // namespace

InterruptGuard::InterruptGuard() {
  gInterrupted = 0;
  struct sigaction sa {};
  sa.sa_handler = onSweepInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &oldInt_);
  sigaction(SIGTERM, &sa, &oldTerm_);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &oldInt_, nullptr);
  sigaction(SIGTERM, &oldTerm_, nullptr);
}

bool InterruptGuard::interrupted() { return gInterrupted != 0; }

void InterruptGuard::interrupt() { gInterrupted = 1; }

void Progress::show(size_t done, size_t running, size_t failed,
                    const std::vector<double> &walls) {
  std::string eta = "-";
  if (!walls.empty()) {
    double mean = 0;
    for (double w : walls)
      mean += w;
    mean /= static_cast<double>(walls.size());
    const double left = static_cast<double>(total_ - done);
    eta = fmt::format("{:.0f} s", mean * left / jobs_);
  }
  const std::string line = fmt::format(
      "[{}/{}] {} running, {} failed, eta {}", done, total_, running, failed, eta);
  if (line == last_)
    return;
  last_ = line;
  if (terminal_)
    out_ << "\r\033[K" << line << std::flush;
  else
    out_ << line << "\n" << std::flush;
}

void Progress::finish() {
  if (terminal_ && !last_.empty())
    out_ << "\n" << std::flush;
}

} // namespace spyre::sweep
