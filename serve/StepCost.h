// What one step of a server costs: the device time of a prefill chunk or a
// decode step of a decoder model, compiled and simulated by the llm library
// (llm/LlmRun.h) and memoised per step shape, and the host's share of the
// step (scheduling, sampling, launch, PCIe transfers) from the hardware
// config (docs/serve.md).
//
// The shape of a step is first padded as the device runs it: prompt tokens
// and cached context to whole 64-token blocks of the paged KV cache. The
// bucket rule then keeps the shapes a run simulates few: only bucket edges
// are simulated (batch a power of two; prefill tokens 64 x a power of two;
// decode context `contextBase` x a power of two; the context of a later
// prefill chunk as it is), and a step between edges costs the linear
// interpolation of its two neighbouring edges in each dimension (bilinear
// in batch and tokens or context). A count below the
// lowest edge runs as that edge. tests/serve bounds the interpolation's
// error against the simulated exact shape (docs/serve.md).
#pragma once

#include "hw/HwConfig.h"
#include "llm/LlmConfig.h"

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace spyre::serve {

/// Tokens in one block of the paged KV cache (vLLM's block size on Spyre).
constexpr int64_t kBlockTokens = 64;

enum class StepKind { Prefill, Decode };

/// The shape of one step as the device runs it.
struct StepShape {
  StepKind kind = StepKind::Decode;
  int64_t batch = 1;
  int64_t tokens = 1;  ///< new tokens per sequence: 1 in decode
  /// Cached tokens per sequence: in prefill, those of the prompt's
  /// earlier chunks (0 for its first).
  int64_t context = 0;
  auto operator<=>(const StepShape &) const = default;
};

struct BucketRule {
  int64_t tokenBase = 64;
  int64_t contextBase = 256;
  /// No buckets: each padded shape simulated.
  bool exact = false;
};

/// The smallest base x 2^k >= n (n >= 1).
int64_t roundUpPow2Multiple(int64_t n, int64_t base);

/// The shape as the device runs it: tokens and context rounded up to whole
/// KV-cache blocks (kBlockTokens).
StepShape padded(const StepShape &exact);

/// The simulated shapes whose costs, weighted, give the cost of `shape` (a
/// padded one): its bucket's corners, or `shape` itself with weight 1 for
/// an exact rule or a shape on the edges.
std::vector<std::pair<StepShape, double>>
bucketCorners(const StepShape &shape, const BucketRule &rule);

/// The device time of a step for the whole model: the simulated layers'
/// time x layers / simulated layers, plus the final norm and LM head
/// (simulated with the step).
struct StepCost {
  double layerUs = 0; ///< one decoder layer
  double headUs = 0;  ///< the final norm and the LM head
  double deviceUs = 0;
};

/// Device step times, simulated once per bucketed shape.
class StepCostModel {
public:
  virtual ~StepCostModel() = default;
  virtual StepCost cost(const StepShape &shape) = 0;
  /// Every shape costed so far, in shape order.
  virtual const std::map<StepShape, StepCost> &memo() const = 0;
};

/// The device time of a padded shape under the bucket rule.
double deviceUs(StepCostModel &costs, const StepShape &shape,
                const BucketRule &rule);

struct SimulatedCostOptions {
  std::string modelConfig; ///< config.json
  std::string hwConfig;    ///< empty: built-in
  int optLevel = 2;
  int64_t simulatedLayers = 1;
};

/// Compiles and simulates each shape once (timing only, the plain-C++
/// event loop, so one process can run many), and remembers it.
class SimulatedStepCost final : public StepCostModel {
public:
  explicit SimulatedStepCost(SimulatedCostOptions options)
      : options_(std::move(options)) {}
  StepCost cost(const StepShape &shape) override;
  const std::map<StepShape, StepCost> &memo() const override { return memo_; }

private:
  SimulatedCostOptions options_;
  std::map<StepShape, StepCost> memo_;
};

/// The host's share of a step, each figure from the hardware config's
/// `host` section (docs/hardware.md).
struct HostCosts {
  double stepUs = 0;           ///< scheduling and input preparation
  double samplePerSequenceUs = 0;
  double launchUs = 0;         ///< one program launch
  double pcieGBps = 0;
  double pcieLatencyUs = 0;    ///< fixed cost of one transfer
  int64_t tokenIdBytes = 8;    ///< int64 token ids, as PyTorch's input_ids
  int64_t logitsBytesPerSequence = 0; ///< vocabulary x 2 (DL16 -> fp16)
};

HostCosts hostCosts(const hw::HwConfig &hw, const llm::LlmConfig &model);

/// One step's time split as the report shows it, microseconds.
struct StepTime {
  double hostUs = 0;   ///< scheduling and sampling
  double launchUs = 0;
  double h2dUs = 0;    ///< token ids in
  double deviceUs = 0;
  double d2hUs = 0;    ///< logits out
  double totalUs() const { return hostUs + launchUs + h2dUs + deviceUs + d2hUs; }
};

/// A step of device time `deviceUs` that takes `inputTokens` token ids in,
/// returns `logitRows` rows of logits (one per sequence of the program's
/// batch) and samples `sampled` of them. A step that samples nothing (a
/// prefill chunk short of the prompt's end) returns no logits.
StepTime stepTime(const HostCosts &host, double deviceUs, int64_t inputTokens,
                  int64_t logitRows, int64_t sampled);

/// Bytes of the model's weights on the device (DL16): the layers, the final
/// norm, the embedding table and, unless tied to it, the LM head.
int64_t weightBytes(const llm::LlmConfig &model);
/// Bytes of keys and values one token keeps in the cache (all layers, DL16).
int64_t kvBytesPerToken(const llm::LlmConfig &model);

} // namespace spyre::serve
