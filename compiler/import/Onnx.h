// ONNX import: a .onnx model file becomes a graph IR (docs/onnx.md).
//
// The file is parsed (initializers stored in external files are located
// but not read), its default-domain opset brought to 13-17 (OnnxOpsets.h:
// models of opsets 7 to 27 are read), the ONNX checker run, the shape overrides applied to the inputs, and ONNX shape
// inference run in strict mode (with data propagation, so shapes computed
// by Shape/Gather/Concat chains become static). Every ONNX value keeps its
// name; each IR op is named after the ONNX node it comes from (made unique)
// and located at `graph.node[i]`. Initializers and Constant nodes become IR
// constants when an op reads them as data (float32, float16), and are read
// at import time where an op needs a shape, axes, split sizes, an exponent
// or a Where condition. Nodes whose results only feed such static inputs
// are not converted at all.
//
// Exporter patterns become single ops: RMSNorm written as Pow/ReduceMean/
// Add/Sqrt/Div (or Reciprocal and Mul), with its weight Mul, becomes
// rmsnorm; an Add of a constant causal mask, or a Where with a constant
// causal condition, becomes causal_mask_add. The erf form of GELU is
// imported as its ops and fused by the canonicalize pass.
//
// Every problem is a user error naming the file and, for a node, its index,
// name and op type. What the importer can and cannot convert is queryable
// node by node (onnxCoverage), so a caller can decide what to run elsewhere.
#pragma once

#include "compiler/import/OnnxOpsets.h"
#include "compiler/ir/Graph.h"
#include "support/Diagnostic.h"

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace spyre::compiler {

struct OnnxImportOptions {
  /// Static shapes for graph inputs whose dimensions are dynamic or unknown
  /// in the model: input name -> the whole shape. A dimension the model
  /// states must agree.
  std::map<std::string, Shape> shapeOverrides;
  /// A node the device cannot run becomes a `host` op when the host
  /// library runs it (docs/onnx.md, "Host fallback"); false makes every
  /// such node an error (`--no-fallback`).
  bool hostFallback = true;
};

/// Whether the importer converts one node, and if not, why.
struct OpCoverage {
  int nodeIndex = 0;    ///< position in graph.node
  std::string nodeName; ///< as in the model (may be empty)
  std::string opType;   ///< `MatMul`; `com.example.Foo` for other domains
  bool supported = false;
  /// Supported by running on the host (a `host` op); `reason` says why the
  /// device does not run it.
  bool onHost = false;
  /// Empty when the node converts as written; otherwise why it does not,
  /// or, for a supported node, how it is handled (`not needed: ...`).
  std::string reason;
};

/// The ONNX op types (default domain) the importer converts, sorted.
std::span<const std::string_view> onnxSupportedOpTypes();

/// Whether input `index` of a default-domain node of `opType` is read at
/// import time as a static parameter (Reshape's shape, the axes of Squeeze,
/// Unsqueeze and ReduceSum, Split's sizes, Pow's exponent, Where's
/// condition) rather than computed as data. Such an input must be a
/// constant, or (for shapes, axes and sizes) follow from the static shapes
/// ONNX shape inference gives.
bool isOnnxStaticInput(std::string_view opType, int index);

/// Whether input `index` of a node of `opType` that runs on the host is a
/// parameter folded into the host op's attributes (Slice's starts, ends,
/// axes and steps; Gather's indices; Pad's pads and constant value;
/// Expand's shape; Tile's repeats; Clip's bounds; CumSum's axis).
bool isHostParamInput(std::string_view opType, int index);

/// The attribute name under which a host op reads input `index` of
/// `opType` (host/HostOp.h), empty for a data input.
std::string hostParamName(std::string_view opType, int index);

/// Imports a .onnx file. Returns nullopt after reporting the first error.
std::optional<Graph> importOnnx(const std::string &path,
                                const OnnxImportOptions &options,
                                DiagnosticEngine &diags);

/// The same for a model already in memory; `fileName` names it in messages.
std::optional<Graph> importOnnxModel(const onnx::ModelProto &model,
                                     const std::string &fileName,
                                     const OnnxImportOptions &options,
                                     DiagnosticEngine &diags);

/// One entry per node of the model, in node order. A model-level problem
/// (a file that does not parse, the checker, a dynamic input dimension) is
/// reported to `diags` and gives an empty list. Nodes that read the result
/// of an unsupported node are converted as if that result were an input of
/// the model (when ONNX shape inference gives it a static float type).
std::vector<OpCoverage> onnxCoverage(const std::string &path,
                                     const OnnxImportOptions &options,
                                     DiagnosticEngine &diags);
std::vector<OpCoverage> onnxCoverage(const onnx::ModelProto &model,
                                     const std::string &fileName,
                                     const OnnxImportOptions &options,
                                     DiagnosticEngine &diags);

/// Reads and parses a .onnx file without checking it (for tools and tests
/// that edit a model before importing it); false after reporting.
bool readOnnxModel(const std::string &path, onnx::ModelProto &model,
                   DiagnosticEngine &diags);

} // namespace spyre::compiler
