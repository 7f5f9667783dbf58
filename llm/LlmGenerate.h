// `spyre llm --generate N` as a library: greedy generation on the persistent
// device (LlmDevice.h). B sequences of seeded prompt tokens are prefilled
// together (whole, or in chunks each after the ones before it), then N
// decode steps each give every sequence its next token;
// the summary prints the tokens, the time to first token and each step's
// latency with its parts (program, host-to-device token ids and rotary
// tables, device-to-host next tokens or logits) and the bytes each way. With
// `check`, every sequence is generated again by the double-precision reference
// (referenceGenerate) with the weights the device stores: the tokens must be
// identical and every step's logits within the DL16 tolerance of
// docs/compiler.md. docs/llm.md.
#pragma once

#include "llm/LlmDevice.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spyre::llm {

struct GenerateOptions {
  std::string modelConfig; ///< the config.json
  std::string hwConfig;    ///< hardware config YAML; empty: built-in
  /// A loaded hardware config, used instead of hwConfig when set.
  const hw::HwConfig *hwObject = nullptr;
  int64_t layers = 0;      ///< 0: all the model's
  int optLevel = 2;
  bool timingOnly = false;
  bool check = false;
  uint64_t seed = 1; ///< of the weights and the prompts
  /// A checkpoint the weights are read from instead of the seed (the
  /// prompts stay seeded); empty: none.
  std::string weights;
  int64_t batch = 1;
  int64_t promptTokens = 60;
  int64_t steps = 8; ///< decode steps after the prefill
  /// Prefill the prompts in chunks of at most this many tokens, each a
  /// prefill after the chunks before it (chunked prefill); none: the whole
  /// prompt in one step.
  std::optional<int64_t> chunk;
  /// A paged cache (pages from a pool, found through each sequence's block
  /// table) instead of a row of pages per sequence.
  bool paged = false;
  /// Timing only, instead of a prompt and its prefill: every sequence
  /// starts with this many cached tokens (of no value); none: a prefill.
  std::optional<int64_t> context;
  /// The logits of every step go to the host, which takes the arg-max
  /// (the path of a sampler other than greedy), instead of the arg-max on
  /// the device sending back one id per sequence.
  bool hostSampling = false;
  /// Every layer's own copy of each step's code instead of one layer's
  /// code in a loop over the layers.
  bool unrolled = false;
};

/// One sequence's check against the reference.
struct SequenceCheck {
  std::vector<int64_t> reference; ///< the reference's tokens
  bool tokensEqual = false;
  size_t firstDifference = 0; ///< step of the first unequal token
  size_t logitsOutside = 0;   ///< logits outside the tolerance, all steps
  double maxAbsDiff = 0;      ///< largest logit difference, all steps
  double worstAllowed = 0;    ///< the tolerance where that difference was
};

struct GenerateReport {
  LlmConfig config;
  GenerateOptions options;
  int64_t layers = 0;
  int64_t capacity = 0; ///< tokens of each slot's cache
  double clockGhz = 1;
  uint64_t weightBytes = 0;
  uint64_t weightLoadCycles = 0;
  std::vector<std::vector<int64_t>> prompts;
  /// The prefill (one step per chunk), then the decode steps.
  std::vector<DeviceStep> steps;
  /// Steps of the prefill: the last gives the first token.
  size_t prefillSteps = 0;
  /// Per sequence: the tokens generated (one per step).
  std::vector<std::vector<int64_t>> tokens;
  /// Per sequence: its pages at the end (its block table).
  std::vector<std::vector<int64_t>> blockTables;
  std::vector<SequenceCheck> checks; ///< with `check`

  bool checkFailed() const;
  size_t findings() const;
  /// 0, or 3 for a failed check or a finding.
  int exitCode() const;
  double us(uint64_t cycles) const {
    return static_cast<double>(cycles) / (clockGhz * 1000.0);
  }
};

/// The prompts: `batch` sequences of `tokens` ids drawn from `seed`.
std::vector<std::vector<int64_t>> seededPrompts(int64_t batch, int64_t tokens,
                                                int64_t vocab, uint64_t seed);

/// Generates; a bad option is a UserError (usage) naming the flag.
GenerateReport runGeneration(const GenerateOptions &options);

std::string generationText(const GenerateReport &report);

} // namespace spyre::llm
