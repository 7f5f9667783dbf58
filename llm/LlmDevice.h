// A decoder language model served on a persistent device (run/Device.h):
// its weights written into device memory once, a key/value cache per
// sequence slot kept there, and prefill and decode steps run one after
// another against them (docs/llm.md#the-persistent-device).
//
// The cache is keys and values per layer, each stored transposed as
// [KV, head_dim, positions] (sticked on the positions) in 64-token pages: a
// page holds 64 positions of every head, KV x head_dim sticks, and n
// consecutive pages are the tensor [KV, head_dim, 64n] as a program
// declares it, in place. A sequence's pages are listed in its block table:
// contiguous, each slot owns a row of pages; paged, pages come from a pool
// shared by the slots as sequences grow. A step is compiled for its
// sequences' positions and block tables: a decode step of a sequence at
// position p reads each run of consecutive full pages (past_key.T.N) and the
// tokens of its current page (key_tail.T), and writes the page with the new
// token appended over the tail (key_page.T, an output in the tail's
// sticks): the cache is written in place, one page per layer and sequence,
// never copied. A prefill writes its sequences' pages, run by run.
//
// Each layer's weights and cache pages are one region, the regions of one
// layout a constant stride apart, so that a step of several layers runs
// one layer's code in a loop over them (LlmLoop.h), as the whole model's
// program does; with LlmDeviceOptions::unrolled it compiles every layer's
// own copy instead.
//
// The step's tokens go in as ids: the embedding lookup is on the device (an
// `embedding` op reading each id into a register, bounded by the
// vocabulary), and so is greedy sampling (an `argmax` op), so a decode step
// sends B ids and takes B ids back. Around the programs, on the host and
// charged over PCIe (Device::transfer): the ids and positions in (the
// rotary tables of every position stay on the device and a step gathers
// its rows; with a head_dim the rotary op cannot take, the host sends the
// tables of the step's positions instead), and the next tokens back, or
// with hostSampling the logits back (for a sampler other than greedy; the
// arg-max is then taken on the host).
#pragma once

#include "compiler/ref/Evaluator.h"
#include "hw/HwConfig.h"
#include "llm/LlmConfig.h"
#include "llm/LlmGraph.h"
#include "run/Device.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace spyre::llm {

struct LlmDeviceOptions {
  int64_t slots = 1; ///< sequences with a cache on the device
  /// Tokens per sequence the cache holds (rounded up to whole pages).
  int64_t capacity = kCachePageTokens;
  /// Pages anywhere in a pool shared by the slots, each sequence's found
  /// through its block table, instead of each slot's pages in a row of its
  /// own (the contiguous layout).
  bool paged = false;
  /// Paged: pages in the pool (per layer, for keys and for values); 0:
  /// enough for every slot's capacity.
  int64_t pages = 0;
  int64_t layers = 0; ///< 0: all the model's
  int optLevel = 2;
  bool numerics = true; ///< false: time the steps only, no data
  /// The logits of each step go to the host (charged over PCIe), which
  /// takes the arg-max, instead of the arg-max on the device sending back
  /// one id per sequence.
  bool hostSampling = false;
  uint64_t seed = 1;    ///< of the random weights
  /// Compile every layer's own copy of a step's code instead of one
  /// layer's code in a loop over the layers (LlmLoop.h).
  bool unrolled = false;
  /// A checkpoint (LlmWeights.h) the weights are read from instead; empty:
  /// none. Without numerics its headers are checked and no data is read.
  std::string weights;
};

/// One step on the device, for a batch of sequences.
struct DeviceStep {
  StepShape shape;
  /// Per sequence: its greedy next token and its logits (numerics only;
  /// on the device's arg-max path the logits are read from device memory
  /// for checks, not sent to the host, and not charged).
  std::vector<int64_t> tokens;
  std::vector<std::vector<double>> logits;
  uint64_t programCycles = 0; ///< the step's program on the device
  /// Token ids and positions (or rotary tables), host to device.
  uint64_t inputCycles = 0;
  uint64_t outputCycles = 0;  ///< next tokens (or logits), device to host
  /// Whether the next tokens came from the device's arg-max (else from
  /// the logits on the host).
  bool greedyOnDevice = false;
  /// Starting the program from the host (host.launch_us).
  uint64_t launchCycles = 0;
  uint64_t inputBytes = 0, outputBytes = 0;
  run::ProgramRun run;
  uint64_t programBytes = 0; ///< the program file's size

  /// The step as the host sees it: inputs in, launch, program, logits out.
  uint64_t cycles() const {
    return inputCycles + launchCycles + programCycles + outputCycles;
  }
};

class LlmDevice {
public:
  /// Reserves and writes the weights (read from `options.weights`, else
  /// drawn from `options.seed` as llmInputs draws them) and reserves every
  /// slot's cache.
  LlmDevice(const LlmConfig &config, const hw::HwConfig &hw,
            const LlmDeviceOptions &options);

  const LlmConfig &config() const { return config_; }
  int64_t layers() const { return layers_; }
  int64_t capacity() const { return capacity_; }
  run::Device &device() { return device_; }
  /// Cycles to send the weights over PCIe once (before the first step).
  uint64_t weightLoadCycles() const { return weightLoadCycles_; }
  uint64_t weightBytes() const { return weightBytes_; }

  /// Tokens in slot `slot`'s cache.
  int64_t position(int64_t slot) const;
  /// The pages of slot `slot`'s sequence, in order (its block table).
  const std::vector<int64_t> &blockTable(int64_t slot) const;
  /// Pages of the pool no sequence holds.
  int64_t freePages() const;
  /// Page `page` of the keys (or values) of layer `layer`: [KV, head_dim,
  /// 64] in device memory.
  isa::TensorDecl pageTensor(int64_t layer, int64_t page, bool value) const;
  /// Contiguous layout: the keys (or values) of slot `slot`, layer
  /// `layer`: the whole cache tensor [KV, head_dim, capacity].
  isa::TensorDecl cacheTensor(int64_t layer, int64_t slot, bool value) const;

  /// A prefill of the prompts (all the same length) of the sequences in
  /// `slots`; their caches hold the prompts after. A sequence with tokens
  /// in its cache already takes its prompt after them (a later chunk of a
  /// chunked prefill, or the rest of a prompt whose start is cached).
  DeviceStep prefill(const std::vector<int64_t> &slots,
                     const std::vector<std::vector<int64_t>> &prompts);
  /// One decode step: token `tokens[i]` of the sequence in `slots[i]`, at
  /// that slot's position (each its own).
  DeviceStep decode(const std::vector<int64_t> &slots,
                    const std::vector<int64_t> &tokens);
  /// Timing only (no numerics): slot `slot` holds `tokens` cached tokens of
  /// no value, as if a prefill had run, so that decode steps at a long
  /// context can be timed without simulating its prefill.
  void assumeCached(int64_t slot, int64_t tokens);
  /// Empties a slot: its pages are zeroed (the padding lanes of a partial
  /// page must read zero) and, paged, returned to the pool; its position
  /// is 0.
  void release(int64_t slot);

  /// The weights as the device stores them (DL16 values), by input name,
  /// and the embedding table [vocab, hidden] (what the device's
  /// `model.embed_tokens.weight` holds; with tied embeddings a copy of the
  /// LM head's, stored [vocab, hidden] for the lookup).
  compiler::ref::TensorMap storedWeights() const;
  const std::vector<double> &embeddingTable() const { return embedding_; }

private:
  DeviceStep step(const StepShape &shape, const std::vector<int64_t> &slots,
                  const std::vector<std::vector<int64_t>> &tokens);
  uint64_t pageAddress(int64_t layer, int64_t page, bool value) const;
  /// Gives slot `slot` the pages for `tokens` tokens (paged: from the pool,
  /// lowest first; a UserError when it is empty).
  void holdPages(int64_t slot, int64_t tokens);
  /// The runs of consecutive pages among `pages` entries of a slot's
  /// block table from entry `first` on, as (first page, length).
  std::vector<std::pair<int64_t, int64_t>> runsOf(int64_t slot, int64_t first,
                                                  int64_t pages) const;
  void checkSlot(int64_t slot) const;

  LlmConfig config_;
  LlmDeviceOptions options_;
  int64_t layers_ = 0;
  int64_t capacity_ = 0;
  run::Device device_;
  std::map<std::string, isa::TensorDecl> weights_;
  std::vector<double> embedding_; ///< [vocab, hidden], DL16 values
  /// Every layer's weights and cache pages are in a region of its own, of
  /// one layout, a constant stride apart (so that a step can loop over
  /// the layers, LlmLoop.h): layer l's from layersStart_ + l x stride_.
  uint64_t layersStart_ = 0; ///< sticks
  uint64_t layerStride_ = 0; ///< sticks
  uint64_t cacheOffset_ = 0; ///< of the cache pages in a layer's region
  uint64_t pageSticks_ = 0;       ///< KV x head_dim
  int64_t poolPages_ = 0;         ///< per layer, keys and values each
  std::vector<int64_t> positions_;
  std::vector<std::vector<int64_t>> blocks_; ///< per slot
  std::vector<bool> pageHeld_;               ///< per page of the pool
  uint64_t weightLoadCycles_ = 0;
  uint64_t weightBytes_ = 0;
};

/// Greedy generation on the host reference (compiler/ref, double
/// precision) with the given weights: every token from a full forward pass
/// over all the tokens so far (the prefill graph, no cache), so it shares
/// nothing with the device's cache. Returns the `steps + 1` tokens after
/// the prompt and the logits each was taken from.
struct ReferenceGeneration {
  std::vector<int64_t> tokens;
  std::vector<std::vector<double>> logits;
};
ReferenceGeneration referenceGenerate(const LlmConfig &config, int64_t layers,
                                      const compiler::ref::TensorMap &weights,
                                      const std::vector<double> &embedding,
                                      const std::vector<int64_t> &prompt,
                                      int64_t steps);

/// The index of the largest value (the first of equals).
int64_t argmax(const std::vector<double> &values);

} // namespace spyre::llm
