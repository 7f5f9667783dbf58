// Running `spyre sim` end to end for the tests in this folder, one
// simulation per process as a user runs it: assembling a program with
// `spyre asm`, simulating it with statistics and a trace written to a
// temporary folder, and reading back what the run wrote.
#pragma once

#include "testlib/RunTool.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace spyre::test {

/// Assembles examples/asm/<name>.s to <dir>/<name>.spyre (for `config` when
/// given) and returns that path. Fails the test if `spyre asm` fails.
std::string assembleExample(const std::string &name, const std::string &dir,
                            const std::string &config = "");

/// Writes `text` to <dir>/<name>.s, assembles it and returns the program path.
std::string assembleText(const std::string &name, const std::string &text,
                         const std::string &dir);

struct SimRun {
  ToolResult tool;
  std::string dir;       ///< fresh folder holding stats.json, trace.json, out/
  std::string statsText; ///< empty when the run wrote no stats
  std::string traceText; ///< empty when the run wrote no trace
  nlohmann::json stats;  ///< parsed statsText (null when absent)
  std::string outputs() const { return dir + "/out"; }
};

struct SimArgs {
  std::string inputs;             ///< --inputs; empty: none
  bool outputs = false;           ///< --outputs <dir>/out
  bool trace = true;              ///< --trace <dir>/trace.json
  bool timingOnly = false;        ///< --timing-only
  std::vector<std::string> extra; ///< anything else, appended last
};

/// Runs `spyre sim <program> --stats <dir>/stats.json ...` in a fresh folder.
SimRun simulate(const std::string &program, const SimArgs &args);

/// tests/data/sim/<relative> in the source tree.
std::string simData(const std::string &relative);

/// The bytes of a file ("" when it cannot be read).
std::string readBytes(const std::string &path);

/// Checks the trace with TraceCheck, then against the stats of the same run:
/// one process per core with stats, one named thread per engine, one slice
/// per executed instruction, each thread's slices adding up to the engine's
/// busy + stall cycles and ending `idle_cycles` before `total_cycles`, slice
/// times in microseconds matching their cycles, one instant per finding.
void expectTraceMatchesStats(const std::string &traceText,
                             const nlohmann::json &stats);

/// The values of a float32 .npy file written by the simulator, after
/// checking its dtype and shape.
std::vector<float> readF32(const std::string &path,
                           const std::vector<int64_t> &shape);

} // namespace spyre::test
