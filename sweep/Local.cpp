// The local backend (runLocal in Sweep.h): the unfinished points run as
// child processes, `jobs` at a time, each `spyre sweep SPEC -o DIR --point I`
// with its stdout and stderr in the point's folder. A child that ends
// without writing its result (a crash) leaves a failed result saying how it
// ended; SIGINT or SIGTERM stop every child and leave the finished results
// for the next run to keep.
#include "sweep/Progress.h"
#include "sweep/Sweep.h"

#include "support/FileIO.h"
#include "sweep/Results.h"

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <filesystem>
#include <iostream>
#include <map>
#include <ostream>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace spyre::sweep {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// How often the runner looks for finished children.
constexpr std::chrono::milliseconds kPollInterval{10};
/// How long stopped children get to exit before SIGKILL.
constexpr std::chrono::seconds kStopGrace{2};
/// Lines of a crashed child's stderr kept in its result.
constexpr size_t kStderrTail = 400;

struct Running {
  size_t index = 0;
  Clock::time_point start;
};

pid_t spawnPoint(const SweepPlan &plan, const SweepPoint &p,
                 const std::string &exe) {
  const fs::path dir = pointDir(plan, p);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw UserError(SourceLoc{dir.string()},
                    "cannot create the point's folder: " + ec.message());
  const std::string out = (dir / "stdout.txt").string();
  const std::string err = (dir / "stderr.txt").string();

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // The child starts with the default actions for the signals this process
  // handles, so stopping it with SIGTERM ends it.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> args = pointArgv(plan, p.index, exe);
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc =
      posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    throw UserError(SourceLoc{exe}, std::string("cannot start a point: ") +
                                        std::strerror(rc));
  return pid;
}

std::string lastLines(const std::string &path) {
  std::string text;
  try {
    text = readFile(path, kTextFileLimit);
  } catch (const UserError &) {
    return "";
  }
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  if (text.size() > kStderrTail)
    text = "..." + text.substr(text.size() - kStderrTail);
  for (char &c : text)
    if (c == '\n')
      c = ' ';
  return text;
}

/// A child ended without a result: record the failure so the others go on
/// and the summary can say what happened.
void recordCrash(const SweepPlan &plan, const SweepPoint &p, int status,
                 double seconds) {
  PointResult r = resultFor(plan, p);
  const std::string how =
      WIFSIGNALED(status)
          ? fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                        strsignal(WTERMSIG(status)))
          : fmt::format("exited with code {}", WEXITSTATUS(status));
  r.error = "the point's process " + how + " without writing its result";
  const std::string tail =
      lastLines((fs::path(pointDir(plan, p)) / "stderr.txt").string());
  if (!tail.empty())
    r.error += ": " + tail;
  r.wallSeconds = seconds;
  writeFileAtomic(resultPath(plan, p), resultJson(r));
}

/// Stops the children: SIGTERM, then SIGKILL for any still there after the
/// grace period; every one is reaped.
void stopAll(std::map<pid_t, Running> &running) {
  for (const auto &[pid, run] : running)
    kill(pid, SIGTERM);
  const Clock::time_point deadline = Clock::now() + kStopGrace;
  while (!running.empty() && Clock::now() < deadline) {
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      it = waitpid(it->first, &status, WNOHANG) == it->first
               ? running.erase(it)
               : std::next(it);
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  for (const auto &[pid, run] : running) {
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
  }
  running.clear();
}

} // namespace

int runLocal(const SweepPlan &plan, const SweepRunOptions &options,
             std::ostream &out, std::ostream &progress) {
  SPYRE_ASSERT(options.jobs >= 1, "jobs must be at least 1");
  prepareOutDir(plan);
  const std::string exe =
      options.spyreExe.empty() ? currentExecutable() : options.spyreExe;

  // Temporary files of results whose writer was killed mid-write.
  std::error_code ec;
  for (const fs::directory_entry &e :
       fs::directory_iterator(fs::path(plan.outDir) / "points", ec))
    if (e.path().filename().string().find(".json.tmp.") != std::string::npos)
      fs::remove(e.path(), ec);

  std::deque<size_t> pending;
  size_t done = 0, failed = 0;
  for (const SweepPoint &p : plan.points) {
    const ResultState state = resultState(plan, p);
    if (state == ResultState::Missing ||
        (state == ResultState::Failed && options.retryFailed)) {
      pending.push_back(p.index);
      continue;
    }
    ++done;
    failed += state == ResultState::Failed ? 1 : 0;
  }
  progress << fmt::format("sweep: {} points, {} already finished, {} to run "
                          "with -j {}\n",
                          plan.points.size(), done, pending.size(),
                          options.jobs)
           << std::flush;

  InterruptGuard guard;
  Progress bar(progress, isatty(STDERR_FILENO) && &progress == &std::cerr,
               plan.points.size(), options.jobs);
  std::map<pid_t, Running> running;
  std::vector<double> walls;
  auto refill = [&] {
    while (!pending.empty() &&
           running.size() < static_cast<size_t>(options.jobs)) {
      const SweepPoint &p = plan.points[pending.front()];
      // A stale result of other settings must not pass for this run's.
      fs::remove(resultPath(plan, p), ec);
      pid_t pid = 0;
      try {
        pid = spawnPoint(plan, p, exe);
      } catch (const UserError &) {
        stopAll(running);
        throw;
      }
      running.emplace(pid, Running{p.index, Clock::now()});
      pending.pop_front();
    }
  };
  refill();
  if (!running.empty())
    bar.show(done, running.size(), failed, walls);
  auto stop = [&] {
    stopAll(running);
    bar.finish();
    // Counted again: a point may have finished while the others stopped.
    size_t finished = 0;
    for (const SweepPoint &p : plan.points)
      finished += resultState(plan, p) == ResultState::Missing ? 0 : 1;
    progress << fmt::format("sweep: interrupted; {} of {} points finished, "
                            "run again to complete the rest\n",
                            finished, plan.points.size());
    return kInterruptedExit;
  };
  while (!running.empty()) {
    if (InterruptGuard::interrupted())
      return stop();
    bool changed = false;
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      if (waitpid(it->first, &status, WNOHANG) != it->first) {
        ++it;
        continue;
      }
      const SweepPoint &p = plan.points[it->second.index];
      const double seconds =
          std::chrono::duration<double>(Clock::now() - it->second.start)
              .count();
      it = running.erase(it);
      const bool stopped =
          WIFSIGNALED(status) &&
          (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM);
      if (stopped) {
        // Stopped from outside (Ctrl-C reaches the whole process group):
        // not a result; the point runs again next time.
        InterruptGuard::interrupt();
        continue;
      }
      ResultState state = resultState(plan, p);
      if (state == ResultState::Missing) {
        recordCrash(plan, p, status, seconds);
        state = ResultState::Failed;
      }
      ++done;
      failed += state == ResultState::Failed ? 1 : 0;
      walls.push_back(seconds);
      changed = true;
    }
    if (!InterruptGuard::interrupted())
      refill();
    if (changed)
      bar.show(done, running.size(), failed, walls);
    std::this_thread::sleep_for(kPollInterval);
  }
  if (InterruptGuard::interrupted())
    return stop();
  bar.finish();
  return aggregate(plan, out);
}

} // namespace spyre::sweep
