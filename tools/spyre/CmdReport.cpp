// `spyre report RUN -o report.html`: a self-contained HTML page of a run
// from what `spyre sim` wrote (a trace JSON, or a statistics JSON with fewer
// charts). The page is made in sim/analysis/RunReport; this file parses the
// command line and writes the file.
#include "Commands.h"
#include "IntOption.h"

#include "sim/analysis/RunReport.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <memory>

namespace spyre::cli {

namespace {

struct ReportCliOptions {
  std::string run;
  std::string output;
  size_t top = 20;
};

int runReport(const ReportCliOptions &o) {
  // Before reading a large trace: an unwritable output fails at once.
  checkNotAnInput({o.output}, {o.run});
  checkWritable(o.output);
  const sim::RunData run = sim::readRunData(readFile(o.run, kJsonFileLimit), o.run);
  sim::RunReportOptions options;
  options.topOps = o.top;
  writeFileAtomic(o.output, sim::htmlReport(run, options));
  return static_cast<int>(ExitCode::Ok);
}

} // namespace

void addReportCommand(CLI::App &app, Dispatch &dispatch) {
  auto opts = std::make_shared<ReportCliOptions>();
  CLI::App *cmd = app.add_subcommand(
      "report", "Write an HTML report of a run: timeline, roofline, LX and "
                "memory over time, engine, op and critical-path tables");
  cmd->add_option("run", opts->run,
                  "A trace (spyre sim --trace) or statistics JSON (--stats)")
      ->required();
  cmd->add_option("-o,--output", opts->output,
                  "The HTML file to write (-: standard output)")
      ->required();
  cmd->add_option("--top", opts->top, "How many ops the ops table lists (default 20)")
      ->check(wholeNumberIn(1, 1000000));
  cmd->callback(
      [opts, &dispatch] { dispatch.run = [opts] { return runReport(*opts); }; });
}

} // namespace spyre::cli
