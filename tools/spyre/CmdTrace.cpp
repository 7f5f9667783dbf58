// `spyre trace summary` and `spyre trace diff`: schedule debugging from what
// `spyre sim` wrote (a statistics JSON or a trace JSON). The analyses live
// in sim/analysis; this file parses the command line and prints.
#include "Commands.h"
#include "IntOption.h"

#include "sim/analysis/Summary.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <iostream>
#include <memory>

namespace spyre::cli {

namespace {

struct TraceCliOptions {
  std::string file;
  std::string fileB;
  bool json = false;
  size_t top = 10;
};

sim::Summary load(const std::string &path) {
  return sim::readSummary(readFile(path, kTraceFileLimit), path);
}

int runSummary(const TraceCliOptions &o) {
  sim::Summary s = load(o.file);
  std::cout << (o.json ? sim::summaryJson(s) : sim::summaryText(s, o.top));
  return static_cast<int>(ExitCode::Ok);
}

int runDiff(const TraceCliOptions &o) {
  sim::Summary a = load(o.file);
  sim::Summary b = load(o.fileB);
  std::cout << (o.json ? sim::diffJson(a, b) : sim::diffText(a, b));
  return static_cast<int>(ExitCode::Ok);
}

} // namespace

void addTraceCommand(CLI::App &app, Dispatch &dispatch) {
  CLI::App *trace = app.add_subcommand(
      "trace", "Summarise or compare what spyre sim wrote (--stats or --trace)");
  trace->require_subcommand(1);

  auto sum = std::make_shared<TraceCliOptions>();
  CLI::App *summary = trace->add_subcommand(
      "summary", "Engine use, stalls by reason, critical path and the ops by "
                 "time with their roofline position");
  summary->add_option("file", sum->file, "A statistics or trace JSON of spyre sim")
      ->required();
  summary->add_flag("--json", sum->json, "Write JSON instead of text");
  summary->add_option("--top", sum->top, "How many ops to list (default 10)")
      ->check(wholeNumberIn(1, 1000000));
  summary->callback([sum, &dispatch] {
    dispatch.run = [sum] { return runSummary(*sum); };
  });

  auto dif = std::make_shared<TraceCliOptions>();
  CLI::App *diff = trace->add_subcommand(
      "diff", "What changed between two runs: total cycles, each engine's busy "
              "and stall time, each op's time, and what changed most");
  diff->add_option("a", dif->file, "The first statistics or trace JSON")->required();
  diff->add_option("b", dif->fileB, "The second statistics or trace JSON")->required();
  diff->add_flag("--json", dif->json, "Write JSON instead of text");
  diff->callback([dif, &dispatch] {
    dispatch.run = [dif] { return runDiff(*dif); };
  });
}

} // namespace spyre::cli
