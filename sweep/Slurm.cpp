// The Slurm backend (Slurm.h): the batch scripts of a sweep's job array and
// aggregation job, their submission with sbatch, and following them with
// squeue. Slurm's commands run as child processes through posix_spawn with
// their output read from pipes; no shell sees a user's path, and the paths
// the scripts name are quoted for the two readers of a batch script (sbatch
// for the #SBATCH lines, /bin/sh for the command).
#include "sweep/Slurm.h"

#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "sweep/Progress.h"
#include "sweep/Results.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace spyre::sweep {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// How often squeue is asked while following the jobs: often enough for a
/// live progress line, rarely enough not to load the controller.
constexpr std::chrono::seconds kFollowInterval{2};
/// Granularity of the waits, so SIGINT is seen promptly.
constexpr std::chrono::milliseconds kWaitStep{100};
/// squeue failures in a row (other than "job gone") before giving up.
constexpr int kSqueueAttempts = 5;

/// Job states after which a job has left the queue for good (squeue(1), "JOB
/// STATE CODES"). Every other state (PENDING, RUNNING, COMPLETING, held
/// or requeued ones) still has work to come.
constexpr std::array<std::string_view, 9> kFinalStates = {
    "COMPLETED", "CANCELLED", "FAILED",        "TIMEOUT", "NODE_FAIL",
    "PREEMPTED", "BOOT_FAIL", "OUT_OF_MEMORY", "DEADLINE"};

std::string absolutePath(const std::string &path) {
  return fs::absolute(path).lexically_normal().string();
}

/// The executable `name` in a folder of $PATH, or empty.
std::string findOnPath(const std::string &name) {
  const char *path = std::getenv("PATH");
  std::string_view rest = path ? path : "";
  while (true) {
    const size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty())
      dir = ".";
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate))
      return candidate;
    if (colon == std::string_view::npos)
      return "";
    rest.remove_prefix(colon + 1);
  }
}

/// The Slurm command `name`, or a UserError saying it is needed.
std::string requireCommand(const std::string &name) {
  std::string found = findOnPath(name);
  if (found.empty())
    throw UserError(SourceLoc{"spyre sweep"},
                    name + " not found on PATH; --submit needs the Slurm "
                           "client commands (Debian: slurm-client), or run "
                           "without --submit and submit the scripts yourself");
  return found;
}

struct ProcessOutput {
  int exitCode = -1; ///< exit status, or 128 + signal number
  std::string out;
  std::string err;
};

/// Runs argv[0] (a path) with `argv`, stdin from /dev/null, and collects its
/// stdout and stderr. A program that cannot start is a UserError.
ProcessOutput runProcess(const std::vector<std::string> &args) {
  SPYRE_ASSERT(!args.empty(), "no program to run");
  std::array<int, 2> outPipe{-1, -1}, errPipe{-1, -1};
  if (::pipe2(outPipe.data(), O_CLOEXEC) != 0 ||
      ::pipe2(errPipe.data(), O_CLOEXEC) != 0)
    throw UserError(SourceLoc{args[0]}, std::string("cannot create a pipe: ") +
                                            std::strerror(errno));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, outPipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, errPipe[1], STDERR_FILENO);
  std::vector<std::string> store = args;
  std::vector<char *> argv;
  for (std::string &a : store)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0].c_str(), &actions, nullptr,
                             argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(outPipe[1]);
  ::close(errPipe[1]);
  if (rc != 0) {
    ::close(outPipe[0]);
    ::close(errPipe[0]);
    throw UserError(SourceLoc{args[0]},
                    std::string("cannot run: ") + std::strerror(rc));
  }

  // Both pipes are drained together, so a child filling one cannot block.
  ProcessOutput result;
  std::array<pollfd, 2> fds{pollfd{outPipe[0], POLLIN, 0},
                            pollfd{errPipe[0], POLLIN, 0}};
  std::array<std::string *, 2> sinks{&result.out, &result.err};
  int open = 2;
  while (open > 0) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0)
        continue;
      std::array<char, 4096> buf{};
      const ssize_t n = ::read(fds[i].fd, buf.data(), buf.size());
      if (n > 0) {
        sinks[i]->append(buf.data(), static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR)
        continue;
      ::close(fds[i].fd);
      fds[i].fd = -1;
      --open;
    }
  }
  for (const pollfd &p : fds)
    if (p.fd >= 0)
      ::close(p.fd);

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    result.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.exitCode = 128 + WTERMSIG(status);
  return result;
}

std::string trimmed(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos)
    return "";
  const size_t end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

/// The file `pattern` in `folder`, for an #SBATCH line: sbatch splits those
/// lines at blanks unless quoted, and a `"` inside quotes is written `\"`;
/// --output and --error expand `%` patterns, where `%%` is a literal `%`
/// (sbatch(1), "filename pattern"). `pattern` keeps its own `%` codes.
/// `folder` holds no backslash (slurmScripts refuses it).
std::string sbatchFileName(const std::string &folder,
                           std::string_view pattern) {
  std::string out = "\"";
  for (char c : folder) {
    if (c == '"')
      out += '\\';
    if (c == '%')
      out += '%';
    out += c;
  }
  return out + "/" + std::string(pattern) + "\"";
}

/// `text` with each control character written as `\xNN`, for a message
/// that names a path which holds one.
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  return out;
}

/// Refuses a path that goes into a batch script when it holds a control
/// character: quoting keeps such a path one word for the shell, but a line
/// break ends a comment or an #SBATCH line, and none belongs in a path a
/// person reads back in the script.
void refuseControlCharacters(const std::string &path, const std::string &what) {
  const auto bad = std::find_if(path.begin(), path.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
  if (bad == path.end())
    return;
  throw UserError(SourceLoc{printable(path)},
                  fmt::format("{} holds a control character (byte 0x{:02x} "
                              "at offset {}), which a batch script cannot "
                              "hold; rename it",
                              what, static_cast<unsigned char>(*bad),
                              bad - path.begin()));
}

/// `spyre-sweep-<spec file stem>`, reduced to characters any job name and
/// any squeue column can hold.
std::string jobName(const SweepPlan &plan) {
  std::string name = "spyre-sweep";
  const std::string stem = fs::path(plan.specPath).stem().string();
  if (!stem.empty())
    name += "-";
  for (char c : stem)
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                    c == '_' || c == '.'
                ? c
                : '_';
  return name;
}

fs::path slurmDir(const SweepPlan &plan) {
  return fs::path(absolutePath(plan.outDir)) / "slurm";
}

/// The job id `sbatch --parsable` printed: `<id>` or `<id>;<cluster>`.
std::string parseJobId(const ProcessOutput &sbatch, const fs::path &script) {
  const std::string text = trimmed(sbatch.out);
  const std::string id = text.substr(0, text.find(';'));
  const bool digits =
      !id.empty() && id.find_first_not_of("0123456789") == std::string::npos;
  if (sbatch.exitCode != 0 || !digits) {
    std::string why = trimmed(sbatch.err);
    if (why.empty())
      why = fmt::format("exit code {}, output '{}'", sbatch.exitCode, text);
    throw UserError(SourceLoc{script.string()},
                    "sbatch refused the job: " + why);
  }
  return id;
}

/// What squeue says about the two jobs.
struct QueueState {
  bool listed = false; ///< either job is still in the queue
  size_t running = 0;  ///< array tasks running
};

/// Reads `squeue -h --jobs=A,B -o '%i %T'` lines: `123_4 RUNNING`,
/// `123_[5-7%2] PENDING`, `124 PENDING`.
QueueState parseQueue(const std::string &text, const std::string &arrayId) {
  QueueState state;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos)
      end = text.size();
    const std::string line =
        trimmed(std::string_view(text).substr(pos, end - pos));
    pos = end + 1;
    const size_t space = line.find(' ');
    if (space == std::string::npos)
      continue;
    const std::string id = line.substr(0, space);
    const std::string jobState = trimmed(line.substr(space + 1));
    if (std::find(kFinalStates.begin(), kFinalStates.end(), jobState) !=
        kFinalStates.end())
      continue;
    state.listed = true;
    if (jobState == "RUNNING" && id.rfind(arrayId + "_", 0) == 0)
      ++state.running;
  }
  return state;
}

/// Waits `duration`, in steps, returning early (false) on SIGINT/SIGTERM.
bool waitUnlessInterrupted(std::chrono::milliseconds duration) {
  const Clock::time_point until = Clock::now() + duration;
  while (Clock::now() < until) {
    if (InterruptGuard::interrupted())
      return false;
    std::this_thread::sleep_for(kWaitStep);
  }
  return !InterruptGuard::interrupted();
}

void writeScripts(const SweepPlan &plan, const SlurmScripts &scripts,
                  bool withArray) {
  const fs::path dir = slurmDir(plan);
  std::error_code ec;
  fs::create_directories(dir / "logs", ec);
  if (ec)
    throw UserError(SourceLoc{(dir / "logs").string()},
                    "cannot create the Slurm folder: " + ec.message());
  if (withArray)
    writeFileAtomic((dir / "sweep.sbatch").string(), scripts.sweep);
  else
    fs::remove(dir / "sweep.sbatch", ec);
  writeFileAtomic((dir / "aggregate.sbatch").string(), scripts.aggregate);
}

/// Submits the scripts, follows the jobs and aggregates.
int submitAndFollow(const SweepPlan &plan, const SweepRunOptions &options,
                    const std::vector<size_t> &pending, std::ostream &out,
                    std::ostream &progress) {
  const std::string sbatch = requireCommand("sbatch");
  const std::string squeue = requireCommand("squeue");
  const fs::path dir = slurmDir(plan);
  const fs::path sweepScript = dir / "sweep.sbatch";
  const fs::path aggregateScript = dir / "aggregate.sbatch";

  // A failed result being retried, or one of other settings, must not pass
  // for this run's while following.
  std::error_code ec;
  for (size_t index : pending)
    fs::remove(resultPath(plan, plan.points[index]), ec);

  const std::string arrayId = parseJobId(
      runProcess({sbatch, "--parsable", sweepScript.string()}), sweepScript);
  const ProcessOutput aggregateRun =
      runProcess({sbatch, "--parsable", "--dependency=afterany:" + arrayId,
                  aggregateScript.string()});
  std::string aggregateId;
  try {
    aggregateId = parseJobId(aggregateRun, aggregateScript);
  } catch (const UserError &e) {
    throw UserError(
        e.diagnostic().loc,
        e.diagnostic().message +
            fmt::format(" (the job array {} is queued; cancel it with "
                        "'scancel {}' or aggregate later with --aggregate)",
                        arrayId, arrayId));
  }
  const size_t finishedBefore = plan.points.size() - pending.size();
  progress << fmt::format("sweep: {} points, {} already finished, {} to run "
                          "as Slurm job array {} (at most {} at once), "
                          "aggregation job {}\n",
                          plan.points.size(), finishedBefore, pending.size(),
                          arrayId, options.jobs, aggregateId)
           << std::flush;

  InterruptGuard guard;
  Progress bar(progress, isatty(STDERR_FILENO) && &progress == &std::cerr,
               plan.points.size(), options.jobs);
  std::vector<size_t> waiting = pending;
  size_t done = finishedBefore, failed = 0;
  for (const SweepPoint &p : plan.points)
    failed +=
        std::find(pending.begin(), pending.end(), p.index) == pending.end() &&
                resultState(plan, p) == ResultState::Failed
            ? 1
            : 0;
  std::vector<double> walls;
  const std::string jobs = "--jobs=" + arrayId + "," + aggregateId;
  int squeueFailures = 0;
  while (true) {
    const ProcessOutput queue = runProcess({squeue, "-h", jobs, "-o", "%i %T"});
    QueueState state;
    if (queue.exitCode == 0) {
      squeueFailures = 0;
      state = parseQueue(queue.out, arrayId);
    } else if (queue.err.find("Invalid job id") == std::string::npos) {
      // A controller briefly busy answers the next time; one that keeps
      // failing is reported, the jobs themselves are not touched.
      if (++squeueFailures >= kSqueueAttempts) {
        bar.finish();
        throw UserError(SourceLoc{squeue},
                        fmt::format("squeue failed {} times in a row: {} "
                                    "(jobs {} and {} may still run)",
                                    kSqueueAttempts, trimmed(queue.err),
                                    arrayId, aggregateId));
      }
      state.listed = true;
    }

    for (auto it = waiting.begin(); it != waiting.end();) {
      std::optional<PointResult> r = readResult(plan, plan.points[*it]);
      if (!r) {
        ++it;
        continue;
      }
      ++done;
      failed += r->ok ? 0 : 1;
      walls.push_back(r->wallSeconds);
      it = waiting.erase(it);
    }
    bar.show(done, state.running, failed, walls);
    if (!state.listed)
      break;
    if (!waitUnlessInterrupted(kFollowInterval)) {
      bar.finish();
      progress << fmt::format(
          "sweep: stopped following; jobs {} and {} keep running (cancel "
          "them with 'scancel {} {}', or run again later to aggregate)\n",
          arrayId, aggregateId, arrayId, aggregateId);
      return kInterruptedExit;
    }
  }
  bar.finish();
  if (!waiting.empty())
    progress << fmt::format("sweep: {} point{} of the array wrote no result; "
                            "their logs are in {}\n",
                            waiting.size(), waiting.size() == 1 ? "" : "s",
                            (dir / "logs").string());
  return aggregate(plan, out);
}

} // namespace

std::vector<size_t> slurmPendingPoints(const SweepPlan &plan,
                                       const SweepRunOptions &options) {
  std::vector<size_t> pending;
  for (const SweepPoint &p : plan.points) {
    const ResultState state = resultState(plan, p);
    if (state == ResultState::Missing ||
        (state == ResultState::Failed && options.retryFailed))
      pending.push_back(p.index);
  }
  return pending;
}

std::string slurmArraySpec(const std::vector<size_t> &indices, int throttle) {
  SPYRE_ASSERT(!indices.empty(), "a job array needs at least one task");
  SPYRE_ASSERT(throttle >= 1, "the array throttle must be at least 1");
  std::string spec;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1)
      ++j;
    SPYRE_ASSERT(i == 0 || indices[i] > indices[i - 1],
                 "array indices must ascend");
    if (!spec.empty())
      spec += ",";
    spec += std::to_string(indices[i]);
    if (j > i)
      spec += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return spec + "%" + std::to_string(throttle);
}

std::string shellQuote(std::string_view word) {
  const bool plain =
      !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
      });
  if (plain)
    return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

SlurmScripts slurmScripts(const SweepPlan &plan,
                          const std::vector<size_t> &indices,
                          const SweepRunOptions &options) {
  SPYRE_ASSERT(!plan.points.empty(), "a sweep plan without points");
  const std::string exe =
      options.spyreExe.empty() ? currentExecutable() : options.spyreExe;
  const std::string logs = (slurmDir(plan) / "logs").string();
  if (logs.find_first_of("\n\r") != std::string::npos)
    throw UserError(SourceLoc{printable(plan.outDir)},
                    "the output folder's path holds a line break, which an "
                    "#SBATCH line cannot name");
  // In --output and --error a backslash turns the % patterns off and is
  // dropped from the name (sbatch(1), "filename pattern"): no spelling of
  // such a folder reaches Slurm intact.
  if (logs.find('\\') != std::string::npos)
    throw UserError(SourceLoc{plan.outDir},
                    "the output folder's path holds a backslash, which Slurm "
                    "drops from the log file names of --output and --error");
  refuseControlCharacters(logs, "the output folder's path");
  refuseControlCharacters(absolutePath(plan.specPath),
                          "the sweep spec's path");
  refuseControlCharacters(exe, "the spyre executable's path");

  // The command is pointArgv's, with the point index left to Slurm.
  const std::vector<std::string> argv =
      pointArgv(plan, plan.points.front().index, exe);
  SPYRE_ASSERT(argv.size() >= 2 && argv[argv.size() - 2] == "--point",
               "pointArgv must end with --point I");
  std::string command;
  for (size_t i = 0; i + 2 < argv.size(); ++i)
    command += (i == 0 ? "" : " ") + shellQuote(argv[i]);

  const std::string name = jobName(plan);
  // The spec's name goes into a comment; quoted like the command's words, so
  // the script reads back as one shell word whatever the name holds.
  const std::string spec =
      shellQuote(fs::path(plan.specPath).filename().string());
  SlurmScripts scripts;
  if (!indices.empty())
    scripts.sweep = fmt::format(
        "#!/bin/sh\n"
        "# The job array of sweep {spec}: task I runs point I; only the\n"
        "# points still to run are listed. Written by `spyre sweep --backend "
        "slurm`.\n"
        "#SBATCH --job-name={name}\n"
        "#SBATCH --array={array}\n"
        "#SBATCH --ntasks=1\n"
        "#SBATCH --output={out}\n"
        "#SBATCH --error={err}\n"
        "exec {command} --point \"$SLURM_ARRAY_TASK_ID\"\n",
        fmt::arg("spec", spec), fmt::arg("name", name),
        fmt::arg("array", slurmArraySpec(indices, options.jobs)),
        fmt::arg("out", sbatchFileName(logs, "point-%a.out")),
        fmt::arg("err", sbatchFileName(logs, "point-%a.err")),
        fmt::arg("command", command));
  scripts.aggregate = fmt::format(
      "#!/bin/sh\n"
      "# Aggregates sweep {spec} into results.csv once its job array has\n"
      "# ended: submit it with --dependency=afterany:<array job id>. Written "
      "by\n"
      "# `spyre sweep --backend slurm`.\n"
      "#SBATCH --job-name={name}-aggregate\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --output={out}\n"
      "#SBATCH --error={err}\n"
      "exec {command} --aggregate\n",
      fmt::arg("spec", spec), fmt::arg("name", name),
      fmt::arg("out", sbatchFileName(logs, "aggregate.out")),
      fmt::arg("err", sbatchFileName(logs, "aggregate.err")),
      fmt::arg("command", command));
  return scripts;
}

int runSlurm(const SweepPlan &plan, const SweepRunOptions &options,
             std::ostream &out, std::ostream &progress) {
  SPYRE_ASSERT(options.jobs >= 1, "jobs must be at least 1");
  const std::vector<size_t> pending = slurmPendingPoints(plan, options);
  // Made first: a DIR Slurm cannot name is refused before anything is
  // created.
  const SlurmScripts scripts = slurmScripts(plan, pending, options);
  prepareOutDir(plan);
  writeScripts(plan, scripts, !pending.empty());
  const fs::path dir = slurmDir(plan);

  if (pending.empty()) {
    progress << fmt::format("sweep: all {} points have a result; nothing to "
                            "submit\n",
                            plan.points.size())
             << std::flush;
    return aggregate(plan, out);
  }
  if (options.submit)
    return submitAndFollow(plan, options, pending, out, progress);

  const std::string sweepScript = (dir / "sweep.sbatch").string();
  const std::string aggregateScript = (dir / "aggregate.sbatch").string();
  out << fmt::format("sweep      {}: {} points, {} already finished, {} in "
                     "the job array (at most {} at once)\n",
                     plan.specPath, plan.points.size(),
                     plan.points.size() - pending.size(), pending.size(),
                     options.jobs)
      << "scripts    " << sweepScript << "\n"
      << "           " << aggregateScript << "\n"
      << "submit     id=$(sbatch --parsable " << shellQuote(sweepScript)
      << ")\n"
      << "           sbatch --dependency=afterany:\"$id\" "
      << shellQuote(aggregateScript) << "\n";
  return static_cast<int>(ExitCode::Ok);
}

int runSlurm(const SweepPlan &plan, const SweepRunOptions &options) {
  return runSlurm(plan, options, std::cout, std::cerr);
}

} // namespace spyre::sweep
