#include "SimFlags.h"
#include "IntOption.h"

#include <fmt/format.h>

#include <iostream>
#include <unistd.h>

namespace spyre::cli {

void addSimFlags(CLI::App &cmd, SimFlags &flags) {
  cmd.add_option("--trace-window", flags.traceWindow,
                 "Trace only cycles START:END (slices overlapping them, "
                 "counters clipped)");
  cmd.add_option("--trace-cores", flags.traceCores,
                 "Trace only these cores, e.g. 0,2-5");
  cmd.add_flag("--no-checks", flags.noChecks,
               "Skip the schedule checks (races, uninitialised reads)");
  cmd.add_option("--max-cycles", flags.maxCycles,
                 "Stop with a finding past this many cycles (0: no limit)")
      ->check(wholeNumberIn(0, kMaxCountOption));
  cmd.add_option("--max-instructions", flags.maxInstructions,
                 "Stop with a finding past this many instructions (0: no limit)")
      ->check(wholeNumberIn(0, kMaxCountOption));
  cmd.add_option("--max-records", flags.maxRecords,
                 "With --stats or --trace: stop with a finding once this many "
                 "per-instruction records are kept, about 140 bytes each "
                 "(default " +
                     std::to_string(sim::kDefaultMaxRecords) + "; 0: no limit)")
      ->check(wholeNumberIn(0, kMaxCountOption));
  cmd.add_option("--quantum", flags.quantum,
                 "Cycles the model runs between SystemC time steps (speed "
                 "only; results do not depend on it)")
      ->check(wholeNumberIn(1, uint64_t{1} << 40));
  cmd.add_option("--progress", flags.progress,
                 "Print progress to stderr while the run goes: auto (default: "
                 "when stderr is a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd.add_option("--progress-interval", flags.progressSeconds,
                 "Seconds of wall time between progress lines (default 3)")
      ->check(numberIn(0, 86400, "number of seconds"));
}

std::string progressLine(const char *command, const sim::RunProgress &p) {
  const double simulatedMs = static_cast<double>(p.cycle) / (p.clockGhz * 1e6);
  const double rate =
      p.wallSeconds > 0 ? static_cast<double>(p.instructions) / p.wallSeconds : 0;
  return fmt::format("{}: {:.3f} ms simulated (cycle {}), {} instructions, "
                     "{:.2f} M instructions/s",
                     command, simulatedMs, p.cycle, p.instructions, rate / 1e6);
}

void applySimFlags(const SimFlags &flags, const char *command,
                   sim::SimOptions &options) {
  options.checks = !flags.noChecks;
  options.maxCycles = flags.maxCycles;
  options.maxInstructions = flags.maxInstructions;
  options.maxRecords = flags.maxRecords;
  const bool show = flags.progress == "always" ||
                    (flags.progress == "auto" && isatty(STDERR_FILENO) == 1);
  if (!show)
    return;
  options.progressSeconds = flags.progressSeconds;
  options.progress = [command](const sim::RunProgress &p) {
    std::cerr << progressLine(command, p) << '\n' << std::flush;
  };
}

} // namespace spyre::cli
