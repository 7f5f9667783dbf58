// The textual form of the graph IR (grammar in docs/ir.md), e.g.
//
//   graph @mlp {
//     input %x : f32[7, 64]
//     const %w1 : f32[256, 64] = data<0x9f3c5e0a12b4c6d8>
//     const %scale : f32[] = dense<[0.125]>
//     %h = linear @fc1(%x, %w1, %b1) : f32[7, 256]
//     %q, %k = split @s(%h) {axis = 1, sizes = [128, 128]} : f32[7, 128], f32[7, 128]
//     return %y
//   }
//
// Printing is deterministic: the same graph always gives the same bytes.
// Attributes print sorted by name, every float with the shortest text that
// reads back exactly. Small constants print their values; larger ones print
// a digest of their data, which the parser resolves through a ConstantPool.
// Annotations print as `#{...}` after what they annotate.
#pragma once

#include "compiler/ir/Graph.h"

#include <string>

namespace spyre::compiler {

struct PrintOptions {
  /// Constants with at most this many elements print their values.
  int64_t inlineConstantLimit = 16;
};

/// The whole graph, ending with a newline.
std::string printGraph(const Graph &graph, const PrintOptions &options = {});

/// One op as one line, without indentation or newline.
std::string printOp(const Op &op);

/// `dense<[...]>` when `data` is small enough and every element's text reads
/// back bit for bit, else `data<0x...>`.
std::string printConstantData(const ConstantData &data,
                              const PrintOptions &options = {});

} // namespace spyre::compiler
