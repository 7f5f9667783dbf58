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
#include <string_view>

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

/// The rungs of IBM's performance ladder for one layer (torch-spyre issue
/// #1643): each a part of the step's graph built alone, its operands graph
/// inputs, with the names and shapes the whole step gives them (layer 0).
///   ResidualAdd  x + branch * residual multiplier          [B, S, D]
///   RmsNorm      the input layernorm                        [B, S, D]
///   QkvProj      h Wq^T, h Wk^T, h Wv^T
///   OProj        context Wo^T
///   MlpProj      h Wg^T, h Wu^T and gated Wd^T (three products)
///   Attention    from q, k, v to the context: rotary, scores, the fused
///                causal softmax (prefill) or the scores joined to the
///                cache's (decode), context, heads merged
///   Mlp          (silu(h Wg^T) * (h Wu^T)) Wd^T
///   Layer        the decoder layer
///   LmHead       final norm and LM head of each sequence's last token
enum class Rung {
  ResidualAdd,
  RmsNorm,
  QkvProj,
  OProj,
  MlpProj,
  Attention,
  Mlp,
  Layer,
  LmHead
};
constexpr Rung kRungs[] = {Rung::ResidualAdd, Rung::RmsNorm, Rung::QkvProj,
                           Rung::OProj,       Rung::MlpProj, Rung::Attention,
                           Rung::Mlp,         Rung::Layer,   Rung::LmHead};
std::string_view rungName(Rung rung);

/// The graph of one rung for the step's shape (its layers and head flags
/// are not used).
std::unique_ptr<compiler::Graph> buildRungGraph(const LlmConfig &config,
                                                const StepShape &shape,
                                                Rung rung);

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
