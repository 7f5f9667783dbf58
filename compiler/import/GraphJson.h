// Graph JSON: the model file format the compiler reads (docs/graph-json.md).
//
//   {"format": "spyre-graph", "version": 1, "name": "mlp",
//    "inputs":    [{"name": "x", "dtype": "f32", "shape": [7, 64]}],
//    "outputs":   ["y"],
//    "constants": [{"name": "w", "dtype": "f32", "shape": [64, 64], "file": "w.npy"},
//                  {"name": "s", "dtype": "f32", "shape": [], "data": [0.125]}],
//    "ops":       [{"name": "fc", "op": "linear", "inputs": ["x", "w"],
//                   "outputs": ["y"], "attrs": {}}]}
//
// The loader is strict: unknown keys, wrong JSON types, unknown tensors and
// ops, attributes the op schema does not have, shapes an op rejects, cycles
// and constant files that are missing or of the wrong shape are errors
// naming the JSON path (`model.json: error: at 'ops[3].inputs[1]': ...`).
// Ops may be listed in any order; the graph holds them in a stable
// topological order (the file's order when that already is one). The writer
// produces a file the loader reads back to an equal graph; annotations and
// source locations are compiler state and are not written.
#pragma once

#include "compiler/ir/Graph.h"
#include "support/Diagnostic.h"
#include "support/Npy.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spyre::compiler {

inline constexpr const char *kGraphJsonFormat = "spyre-graph";
inline constexpr int kGraphJsonVersion = 1;

/// Reads a graph JSON file; constant files are read relative to its folder.
/// Returns nullptr after reporting the first error.
std::unique_ptr<Graph> loadGraphJson(const std::string &path,
                                     DiagnosticEngine &diags);

/// The same from text: `fileName` names the text in messages, `baseDir`
/// resolves relative constant file names.
std::unique_ptr<Graph> parseGraphJson(std::string_view text,
                                      const std::string &fileName,
                                      const std::string &baseDir,
                                      DiagnosticEngine &diags);

/// loadGraphJson for command-line use: the first error is thrown as a
/// UserError (exit code 1).
std::unique_ptr<Graph> loadGraphJsonOrThrow(const std::string &path);

struct GraphJsonWriteOptions {
  /// Constants with at most this many elements, all finite, are written
  /// inline as `data`; the others as .npy files beside the JSON.
  int64_t inlineLimit = 16;
};

/// A serialised graph: the JSON text and the .npy files it refers to.
struct GraphJsonFiles {
  std::string json;
  /// (file name relative to the JSON's folder, contents), in constant order.
  std::vector<std::pair<std::string, NpyArray>> constantFiles;
};

GraphJsonFiles serializeGraphJson(const Graph &graph,
                                  const GraphJsonWriteOptions &options = {});

/// Writes the JSON to `path` and its constant files into the same folder.
void writeGraphJson(const Graph &graph, const std::string &path,
                    const GraphJsonWriteOptions &options = {});

/// A file name for a tensor: `name.npy`, with every character outside
/// `A-Z a-z 0-9 _ . -` replaced by `_` (and a leading `.` too, so the file
/// is never hidden or a path).
std::string tensorFileName(std::string_view name);

} // namespace spyre::compiler
