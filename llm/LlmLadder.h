// IBM's performance ladder (torch-spyre issue #1643 and its children) for a
// decoder LLM: each rung of one layer (LlmGraph.h, Rung) compiled and
// simulated alone for a step shape, then the layer and the whole model, with
// the figures the ladder reports: simulated time, the rung's roofline bound
// from the same memory and PT models, PT utilisation, host time and launch
// time. bench/LlmBench.cpp runs it for Granite-3.3-8B and
// scripts/llm_ladder_table.py makes its JSON the table of docs/llm.md;
// `spyre llm --ladder` prints the same table.
#pragma once

#include "llm/LlmConfig.h"
#include "llm/LlmGraph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spyre::llm {

/// One row of the ladder.
struct LadderRow {
  std::string name;    ///< rungName, or the whole model's
  uint64_t cycles = 0; ///< simulated
  double simulatedUs = 0;
  /// What the bound is made of: every graph input read once and every
  /// output written once (DL16, 2 bytes an element), at the memory's
  /// sustained read rate; the matmuls' MACs at the PT peak of every core.
  int64_t bytes = 0;
  int64_t macs = 0;
  double memoryBoundUs = 0;
  double computeBoundUs = 0;
  double boundUs() const;
  bool memoryBound() const { return memoryBoundUs >= computeBoundUs; }
  /// The bound over the simulated time.
  double boundReached() const;
  /// MACs over what the PT units of every core could do in the simulated
  /// time.
  double ptUtilisation = 0;
  /// Host ops' PCIe transfers and host compute (0 when every op runs on
  /// the device).
  double hostUs = 0;
  /// Starting the program from the host (host.launch_us), once.
  double launchUs = 0;
  size_t hostOps = 0;
  /// The whole model's row (runWholeModel): the compile's wall time
  /// (seconds, not deterministic) and the program file's size.
  double compileSeconds = 0;
  uint64_t programBytes = 0;
};

/// One rung compiled at -O2 and simulated timing only (no weights).
LadderRow runRung(const std::string &modelConfig, const std::string &hwConfig,
                  const StepShape &shape, Rung rung);

/// The whole model from its rungs: `layers` times the layer plus the LM
/// head, in one program (one launch).
LadderRow modelRow(const LadderRow &layer, const LadderRow &lmHead,
                   int64_t layers);

/// The whole model simulated: every layer and the LM head in one program,
/// one layer's code in a loop over the layers (LlmLoop.h), compiled at -O2
/// and simulated timing only.
LadderRow runWholeModel(const std::string &modelConfig,
                        const std::string &hwConfig, const StepShape &shape);

/// Every rung for the shape, then the model rows: extrapolated from one
/// layer, and simulated whole (runWholeModel).
std::vector<LadderRow> runLadder(const std::string &modelConfig,
                                 const std::string &hwConfig,
                                 const StepShape &shape);

/// The Markdown table of a ladder, as scripts/llm_ladder_table.py writes
/// it from the bench's JSON.
std::string ladderTable(const std::vector<LadderRow> &rows);

} // namespace spyre::llm
