// `spyre llm` as a library: a decoder language model's step (LlmGraph.h)
// built from its config.json, compiled and simulated by run::runModel, and
// the figures a server is judged by: time to first token for a prefill,
// per-token latency for a decode step, each against the step's bound (its
// weights and key/value cache read once at the memory's sustained rate, or
// its multiply-accumulates at the PT peak). docs/llm.md.
#pragma once

#include "llm/LlmConfig.h"
#include "llm/LlmGraph.h"
#include "run/RunModel.h"

#include <cstdint>
#include <string>

namespace spyre::llm {

struct LlmRunOptions {
  std::string modelConfig; ///< the config.json
  StepShape shape;
  /// The model's layer count is used when 0.
  int64_t layers = 0;
  std::string hwConfig; ///< hardware config YAML; empty: built-in
  /// A config already loaded, used instead of `hwConfig`; must outlive the
  /// run.
  const hw::HwConfig *hwObject = nullptr;
  int optLevel = 2;
  bool timingOnly = false;
  bool check = false;
  uint64_t seed = 1;
  /// A checkpoint (LlmWeights.h) the weights are read from instead of
  /// drawn from the seed; empty: none. Timing only, its headers are
  /// checked and no data is read.
  std::string weights;
  std::string stats;
  std::string trace;
  bool useSystemC = true; ///< as run::RunOptions::useSystemC
  /// More than one layer: compile every layer's copy of the code instead of
  /// one layer's code in a loop over the layers (LlmLoop.h).
  bool unrolled = false;
  /// false: a run of all the layers in a loop keeps no per-instruction
  /// records (run::RunOptions::records; they grow by about 70 MB a Granite
  /// layer, and the ops of the loop span all the layers), so the report has
  /// no ops and no outsideLayerCycles. Kept whenever they are needed: fewer
  /// layers (the extrapolation), an unrolled program, stats or a trace.
  bool records = true;
  /// Write the compiled program file here (empty: none).
  std::string programOut;
};

struct LlmReport {
  LlmConfig config;
  StepShape shape;
  run::RunReport run;
  StepBytes bytes;
  int64_t macs = 0;
  double sustainedReadGBps = 0;
  /// Cycles of ops outside the layers (embedding scale, LM head).
  uint64_t outsideLayerCycles = 0;
  /// The layers ran as one layer's code in a loop (LlmLoop.h).
  bool looped = false;
  /// Wall time of the compile, seconds (not deterministic).
  double compileSeconds = 0;
  /// Where the weights came from: `random, seed 1`, or the checkpoint.
  std::string weights;
  /// The program file's size and instructions.
  uint64_t programBytes = 0;
  uint64_t instructions = 0;

  /// The simulated step, microseconds.
  double stepUs() const { return run.simulatedUs(); }
  /// The step for all the model's layers: simulated when every layer ran,
  /// else the layers' time scaled by layers / simulated layers.
  double modelUs() const;
  bool extrapolated() const { return shape.layers < config.numLayers; }
  double memoryBoundUs() const;
  double computeBoundUs() const;
  double boundUs() const;
  /// The bound over the simulated time.
  double boundReached() const;
};

/// Builds, compiles and simulates; errors as run::runModel.
LlmReport runLlm(const LlmRunOptions &options);

/// The run's summary (run::summaryText) and the step's figures.
std::string llmSummaryText(const LlmReport &report, size_t topOps = 8);

} // namespace spyre::llm
