// The graph of a decoder language model (Llama or Granite, LlmConfig.h) in
// the compiler's IR, for one step of serving it: a prefill of S new tokens,
// or a decode step of one new token per sequence against a key/value cache
// of L past tokens (docs/llm.md). Weights, the rotary tables and the cache
// are graph inputs, named as the Hugging Face checkpoint names the weights
// with `.T` where they are stored transposed, [in, out]
// (`model.layers.0.self_attn.q_proj.weight.T`), so a run can be fed random
// weights now and real ones later.
//
// Each layer is
//   h = rmsnorm(x); q, k, v = h Wq^T, h Wk^T, h Wv^T; rotary on q and k;
//   attention (grouped-query, causal in prefill); x += (o Wo^T) * residual;
//   h = rmsnorm(x); x += (silu(h Wg^T) * (h Wu^T)) Wd^T * residual.
// Only ops the device runs are used (no host op).
#pragma once

#include "compiler/ir/Graph.h"
#include "llm/LlmConfig.h"
#include "run/Inputs.h"

#include <cstdint>
#include <memory>
#include <string>

namespace spyre::llm {

enum class Mode { Prefill, Decode };

struct StepShape {
  Mode mode = Mode::Prefill;
  int64_t batch = 1;
  /// New tokens per sequence: S in prefill, 1 in decode.
  int64_t tokens = 1;
  /// Past tokens in the cache: L in decode; 0 in prefill (a prefill after
  /// cached tokens is not built yet).
  int64_t context = 0;
  int64_t layers = 1;
  /// Scale the input by Granite's embedding multiplier (the model's first
  /// layer follows the embedding lookup).
  bool embedding = false;
  /// Final norm and LM head after the last layer (the logits of the last
  /// token of each sequence).
  bool lmHead = false;
  compiler::ElementType elementType = compiler::ElementType::F16;
};

/// Builds the step's graph; the shape must be valid for the config (see
/// checkStepShape).
std::unique_ptr<compiler::Graph> buildLlmGraph(const LlmConfig &config,
                                               const StepShape &shape);

/// A UserError (usage) naming the flag when `shape` cannot be built.
void checkStepShape(const LlmConfig &config, const StepShape &shape);

/// Inputs for a run with numerics, drawn from `seed` (compiler/ref/Random.h)
/// and scaled as a trained model's are, roughly: weights uniform with the
/// variance 1/fan-in (so activations keep their scale), norm weights in
/// [0.5, 1.5], hidden states and cache entries in [-1, 1]; the rotary
/// tables are the real ones for the tokens' positions (0..S-1 in prefill,
/// L in decode).
run::ModelInputs llmInputs(const compiler::Graph &graph,
                           const LlmConfig &config, const StepShape &shape,
                           uint64_t seed);

/// Device-memory bytes the step must read at least once: the weights it
/// uses and the key/value cache (DL16, 2 bytes an element).
struct StepBytes {
  int64_t weights = 0;
  int64_t cache = 0;
};
StepBytes stepBytes(const LlmConfig &config, const StepShape &shape);

/// Multiply-accumulates of the step (matmuls and linear layers).
int64_t stepMacs(const LlmConfig &config, const StepShape &shape);

} // namespace spyre::llm
