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
#include <utility>
#include <vector>

namespace spyre::llm {

enum class Mode { Prefill, Decode };

/// Where a step's rotary tables (cos and sin of each token's angles) come
/// from.
enum class Rotary {
  /// Inputs the host sends with every step, per token: rope.cos_q,
  /// rope.sin_q, rope.cos_k, rope.sin_k.
  Tables,
  /// Gathered on the device: the step takes `position_ids` (i32 [B, S]) and
  /// looks up the rows of `rope.cos.table` and `rope.sin.table`
  /// ([StepShape::rotaryRows, head_dim], kept on the device) with
  /// `embedding` ops, into rope.cos and rope.sin [B, S, head_dim], which q
  /// and k share. Needs the rotary op (head_dim a multiple of 128).
  Ids,
  /// rope.cos and rope.sin [B, S, head_dim] are inputs (a looped step's
  /// layer, whose tables the step gathered before the loop).
  Gathered,
};

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
  /// The step's input is its token ids, `input_ids` i32 [B, S], looked up
  /// on the device (an `embedding` op) in the table
  /// `model.embed_tokens.weight` [vocab, hidden], instead of the looked-up
  /// rows `hidden` sent by the host.
  bool tokenIds = false;
  /// With lmHead: the greedy next token of each sequence, `next_token` i32
  /// [B, 1, 1], the arg-max of its logits on the device, as the last
  /// output (the logits stay the first).
  bool greedy = false;
  Rotary rotary = Rotary::Tables;
  /// With Rotary::Ids: the positions the tables hold, [0, rotaryRows).
  int64_t rotaryRows = 0;
  compiler::ElementType elementType = compiler::ElementType::F16;
  /// The key/value cache stays in device memory between steps
  /// (LlmDevice.h): each sequence's keys and values are stored transposed,
  /// [KV, head_dim, positions], in 64-token pages, and the step reads the
  /// cache and writes its new tokens in place, through inputs and outputs
  /// named per layer and sequence (cacheTensorName). Without it, the cache
  /// is an input and the new keys and values are outputs.
  bool residentCache = false;
  /// With residentCache: per sequence, the tokens already in its cache
  /// (the position of its first new token). In prefill, a sequence at a
  /// position past 0 is a prefill after cached tokens (a later chunk of
  /// its prompt).
  std::vector<int64_t> positions;
  /// With residentCache, for a paged cache: per sequence, the lengths (in
  /// pages) of the runs of consecutive pages in its block table, covering
  /// in prefill the pages its tokens fill (after the page of its first new
  /// token when that page holds cached tokens too: key_page.T) and in
  /// decode its full pages before the current one; each run is one input
  /// or output. Empty: each sequence's pages are one run (a contiguous
  /// cache).
  std::vector<std::vector<int64_t>> pageRuns;
  /// With residentCache, a prefill after cached tokens and a paged cache:
  /// per sequence, the runs of its full pages before the page of its first
  /// new token, which the step reads. Empty: one run each.
  std::vector<std::vector<int64_t>> cachedRuns;
};

/// The parts of a sequence's cache a step with a resident cache reads and
/// writes, per layer: `past_key.T.N` (run N of the full pages before the
/// token's page), `key_tail.T` (the tokens already in that page),
/// `key_page.T` (that page with the new tokens, written over the tail),
/// and in prefill `key.T.N` (its tokens in run N of the pages after that
/// one, or from it on when it holds no cached token); the same for values.
std::string cacheTensorName(int64_t layer, int64_t sequence,
                            const std::string &part);

/// Tokens per page of the key/value cache.
constexpr int64_t kCachePageTokens = 64;

/// The pages of a sequence's block table a prefill of `tokens` new tokens
/// at `position` reads and writes, as entries of the table: the full pages
/// before its first new token's (`cached`), and the pages from
/// `firstWritten` on (`written` of them) that its tokens fill, after a
/// partly filled current page, which is key_page.T (cacheTensorName).
struct PrefillPages {
  int64_t cached = 0;
  int64_t firstWritten = 0;
  int64_t written = 0;
};
PrefillPages prefillPages(int64_t position, int64_t tokens);

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
///   PagedAttention  the same against a cache resident in device memory in
///                64-token pages, every page where its block table entry
///                puts it (pagedRungShape): one read per page
///   Mlp          (silu(h Wg^T) * (h Wu^T)) Wd^T
///   Layer        the decoder layer
///   LmHead       final norm and LM head of each sequence's last token
///                (and with greedy, its arg-max, `next_token`)
enum class Rung {
  ResidualAdd,
  RmsNorm,
  QkvProj,
  OProj,
  MlpProj,
  Attention,
  Mlp,
  Layer,
  LmHead,
  PagedAttention, ///< last, so the other rungs keep their numbers
};
constexpr Rung kRungs[] = {Rung::ResidualAdd,    Rung::RmsNorm, Rung::QkvProj,
                           Rung::OProj,          Rung::MlpProj, Rung::Attention,
                           Rung::PagedAttention, Rung::Mlp,     Rung::Layer,
                           Rung::LmHead};
std::string_view rungName(Rung rung);

/// The paged rung's step: `shape` with its cache resident in 64-token
/// pages (StepShape::residentCache), each sequence at the step's context,
/// and every page of its block table a run of its own (no two pages
/// adjacent in device memory, as a long-running server's cache leaves
/// them).
StepShape pagedRungShape(const StepShape &shape);

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

/// The rotary table input of `type` [B, S, heads, head_dim] (or
/// [B, S, head_dim], one head's, which the rotary op takes): cos, or sin
/// with the sign of rotate_half folded in (-sin on the first half of each
/// head), for the positions of the step's tokens (context + s, or with a
/// resident cache positions[b] + s).
std::vector<double> rotaryTable(const compiler::TensorType &type,
                                const LlmConfig &config, const StepShape &shape,
                                bool sine);

/// The step's token ids (`input_ids`, i32 [B, S]) looked up in
/// `model.embed_tokens.weight` [vocab, hidden] by an `embedding` op: the
/// rows [B, S, hidden]. The step's graph and a looped program's first piece
/// (LlmLoop.h) both start so.
compiler::Value *lookUpTokens(compiler::Graph &graph, const LlmConfig &config,
                              const StepShape &shape);

/// Rotary::Ids: the step's `position_ids` (i32 [B, S]) gathering rows of
/// `rope.cos.table` and `rope.sin.table` into rope.cos and rope.sin
/// [B, S, head_dim] (cos first).
std::pair<compiler::Value *, compiler::Value *>
gatherRotaryRows(compiler::Graph &graph, const LlmConfig &config,
                 const StepShape &shape);

/// The rotary tables a step with Rotary::Ids gathers from, rows
/// positions 0 .. rows - 1, [rows, head_dim]: cos, or sin with the sign of
/// rotate_half folded in, as rotaryTable's rows.
std::vector<double> rotaryRows(const LlmConfig &config, int64_t rows,
                               bool sine);

/// The position of each of the step's tokens, [B, S] row-major (context +
/// s, or with a resident cache positions[b] + s).
std::vector<int64_t> positionIds(const StepShape &shape);

/// Tokens in the caches of all the step's sequences before it.
int64_t cachedTokens(const StepShape &shape);

/// Device-memory bytes the step must read at least once: the weights it
/// uses and the key/value cache (DL16, 2 bytes an element).
struct StepBytes {
  int64_t weights = 0;
  int64_t cache = 0;
};
StepBytes stepBytes(const LlmConfig &config, const StepShape &shape);

/// Multiply-accumulates of the step (matmuls and linear layers).
int64_t stepMacs(const LlmConfig &config, const StepShape &shape);

/// A usage error naming `flag` unless lo <= value <= hi:
/// `--layers: error: must be in [1, 40], got 41`.
void checkRange(const char *flag, int64_t value, int64_t lo, int64_t hi);

} // namespace spyre::llm
