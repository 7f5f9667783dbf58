// The decoder-layer patterns PyTorch's exporter writes for a Hugging Face
// language model (Llama, Granite; docs/onnx.md, "Language models"),
// recognised in the graph the importer made and replaced by the ops the
// device runs them with. In order:
//
//  - A host op whose operands are all constants (a Gather of a rotary
//    table by constant positions) becomes the constant it computes, up to
//    2^22 elements in and out.
//  - Rotary embedding, apply_rotary_pos_emb: x * cos + concat(-x2, x1) *
//    sin, with x1 and x2 the halves of the last axis taken by two Slice
//    nodes (host ops at this point), in any operand order. The sign goes
//    into the sines (sin times [-1 .. -1, 1 .. 1], one pass over the
//    table), so the rest is a swap of the halves. When x is a head split,
//    transpose(reshape(p, [B, S, N, hd]), [0, 2, 1, 3]), of a projection p
//    [B, S, N x hd], the halves are whole sticks (hd a multiple of 128) and
//    cos and sin are one head's table per token ([B, 1, S, hd]), it becomes
//    one `rotary` op on p, with the head split after it; otherwise the
//    slices become a split (below) and the ops stay.
//  - Attention: matmul(q, k^T) (k^T a transpose of the last two axes, or
//    transpose_b), a mul or div by a positive scalar constant, an optional
//    causal_mask_add, softmax over the last axis and matmul by v becomes
//    `attention {scale, causal}` of q [B, H, S, D] and the keys and values
//    [B, KV, L, D] as they were before a repeat (below), when one head's
//    keys fit the kernel (L <= 2048, D <= 128) and L >= S.
//  - Key/value repeat, repeat_kv: reshape(expand(unsqueeze(t, 2), [B, KV,
//    G, L, D]), [B, KV x G, L, D]), the Expand a host op, read by matmuls
//    (directly or through a transpose of its last two axes). Each matmul
//    reads t itself: its other operand [B, H, S, X] is viewed as [B, KV,
//    G x S, X] and the product viewed back, so the repeat is never made.
//    When the keys are read transposed (q k^T) and a group's score rows are
//    fewer than a key's elements (G x S < D: decoding), the product is
//    turned around, transpose(t [.., L, D] x grouped^T): the keys are read
//    as they are stored and the small scores are transposed, instead of a
//    transposed copy of every key. When t is a concat along the positions
//    (the past and the new keys or values) that nothing else reads (it is
//    no `present` output), each part is read in place: the scores against
//    each part joined by a concat, the probabilities split by part and the
//    products summed, so the cache is never copied.
//  - Slices (host ops) of one axis with step 1 whose ranges tile that axis
//    of one value (the halves of a rotary embedding the rotary op does not
//    take) become one split of it. Other slices stay host ops.
//
// Each intermediate must feed nothing else; what does not match is left as
// it was and computes as before.
#pragma once

#include "compiler/ir/Graph.h"

#include <set>
#include <string>

namespace spyre::compiler {

/// What fuseLlmPatterns did.
struct LlmPatternCounts {
  int folded = 0;
  int rotary = 0;
  int attention = 0;
  int repeats = 0;
  int slices = 0;
};

/// Applies the rewrites above to an imported graph.
LlmPatternCounts fuseLlmPatterns(Graph &graph);

/// The source key paths (`graph.node[3]`) of the host ops that the
/// rewrites above take onto the device, for the coverage API, which sees
/// the graph before they run and without its outputs: every result nothing
/// reads counts as an output. `graph` is rewritten.
std::set<std::string> hostOpsTakenToDevice(Graph &graph);

} // namespace spyre::compiler
