// Mapping decisions as data: how each op of a laid-out graph runs on the
// chip. The planning passes (compiler/passes: divide, schedule, lx-plan,
// tile) record them on every op as the annotation
//   #{mapping = {cores = 8, first_core = 0, grid = [4, 2],
//                tile = [64, 128, 64], n_outer = true, share_a = true,
//                keep_b = true, k_split = 1, tile_rows = 0, phase = 3,
//                lx = [0, 16384],
//                fuse_bias = "b", overlap = false}}
// and, on the first op of a fused elementwise chain,
//   #{mapping = {..., chain = ["scale", "act"]}}
// with `fused_into = "<first op>"` on each op the chain names.
// and emission (compiler/emit/Emission.h) follows them. A mapping file (JSON, one object per
// op) saves them after a compile and gives them back to another: the
// planning passes keep every decision a file gives and make only the ones
// it leaves out, so a replayed mapping produces the same program.
#pragma once

#include "compiler/ir/Graph.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace spyre::compiler {

inline constexpr const char *kMappingAnnotation = "mapping";

/// One op's decisions. A field left at its "unset" value (-1, empty) is for
/// the planning passes to decide.
struct OpMapping {
  /// Work division: cores [firstCore, firstCore + cores).
  int64_t cores = -1;
  int64_t firstCore = -1;
  /// Matmul: the core grid over (M, N) of each batch's product.
  std::vector<int64_t> grid;
  /// Matmul: tile sizes M, K, N and the loop order.
  std::vector<int64_t> tile;
  std::optional<bool> nOuter;
  /// Matmul: A tiles shared along grid rows over the data ring, B panels
  /// kept in LX (codegen::MatmulTiling). Both false: the plain plan, in
  /// which every core loads its own operands.
  std::optional<bool> shareA, keepB;
  /// Matmul: the grid's K side, the cores that split each (M, N) block's K
  /// and sum their partials over the reduce ring (1: no split). Unset: the
  /// planner decides when it also decides the grid; with a given grid, 1.
  int64_t kSplit = -1;
  /// Row kernels: rows per tile (0: the kernel chooses).
  int64_t tileRows = -1;
  /// Scheduling: ops of one phase run together; a chip-wide barrier
  /// separates phases.
  int64_t phase = -1;
  /// LX region on each of the op's cores: first stick and sticks.
  std::vector<int64_t> lx;
  /// Matmul: the add op whose bias the matmul adds itself (its result is
  /// the add's); on that add, the matmul it was folded into.
  std::string fuseBias;
  std::string fusedInto;
  /// Elementwise: the ops after this one that its kernel runs in the same
  /// pass over each tile (codegen::emitChain), in order; each uses the one
  /// before, and the last one's result is what the kernel stores. Each of
  /// them has this op in `fusedInto`.
  std::vector<std::string> chain;
  /// Whether the op's kernels overlap a core's loads, compute and stores
  /// (codegen::KernelOptions::overlap); unset means true.
  std::optional<bool> overlap;

  bool operator==(const OpMapping &) const = default;

  Attribute toAttribute() const;
  /// nullopt with `error` set when the attribute is not a mapping.
  static std::optional<OpMapping> fromAttribute(const Attribute &attr,
                                                std::string &error);
};

/// The mapping annotated on `op` (an empty one when there is none; a
/// malformed annotation is a bug of whoever wrote it and asserts).
OpMapping opMapping(const Op &op);
void setOpMapping(Op &op, const OpMapping &mapping);

/// A whole graph's mapping: op name -> decisions, plus the config it was
/// made for (a replay under another config is allowed but noted).
struct MappingFile {
  std::string graph;
  std::string configFingerprint;
  std::map<std::string, OpMapping> ops;
};

/// The mapping of every op that has one.
MappingFile collectMapping(const Graph &graph, std::string configFingerprint);
/// JSON text, ops in the graph's order of names (sorted), deterministic.
std::string mappingJson(const MappingFile &file);
/// Reads a mapping file; errors are reported at `path` with the JSON path
/// of the offending entry.
std::optional<MappingFile> parseMappingJson(const std::string &text,
                                            const std::string &path,
                                            DiagnosticEngine &diags);
/// Puts a file's mappings on the graph's ops before planning. An op name the
/// graph does not have is an error naming it.
bool applyMapping(Graph &graph, const MappingFile &file,
                  const std::string &path, DiagnosticEngine &diags);

} // namespace spyre::compiler
