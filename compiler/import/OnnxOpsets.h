// Models of any opset from 7 to 27 of the default ONNX domain, brought to
// the opsets 13 to 17 that the importer converts and that the ONNX library
// it uses (Debian's libonnx 1.12, whose newest opset is 17) checks and
// infers shapes for:
//
// - Opsets 7 to 12 are upgraded to 13 by ONNX's own version converter
//   (onnx/version_converter/convert.h). Initializers whose data is stored
//   in an external file are kept as they are (the converter only sees
//   their shapes).
// - Opsets 18 to 27 are read as opset 17 when every op the model uses
//   means the same there. A table, from ONNX's operator changelog (v1.22.0,
//   opset 27), lists every op version after 17 and what it changed: a new
//   version that only admits more element types (bfloat16, float8, int4)
//   changes nothing for the models the importer reads; a few changes are
//   rewritten to their opset-17 form where a node does not use what they
//   added (Reduce* axes given as a constant input become the attribute,
//   a reduction that noop_with_empty_axes makes do nothing an Identity,
//   Split's num_outputs is dropped, Cast's saturate and round_mode, which
//   only concern float8 and float4, are dropped, Pad without axes or wrap
//   mode is Pad-13); any other change, and an op that opset 17 does not
//   define, is refused naming the node, the op and the opset.
// - A model whose IR version is newer than the library's (8) is read as
//   IR version 8: the newer versions add element types (float8, int4,
//   float4) that the importer does not read anyway, and the checker
//   refuses them by their types.
//
// Every refusal is a UserError located in the model file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace spyre::compiler {

/// The oldest and newest opsets of the default ONNX domain a model may
/// have (docs/onnx.md, "Opsets").
inline constexpr int64_t kOnnxOldestOpset = 7;
inline constexpr int64_t kOnnxNewestOpset = 27;

/// What normalizeOpset did, for messages and tests.
struct OpsetChange {
  int64_t from = 0; ///< the model's opset of the default domain (0: none)
  int64_t to = 0;   ///< the opset it is read as
  /// Nodes (graph.node indexes) that were Split-18 by num_outputs: an
  /// uneven split of one fails opset-17 shape inference.
  std::vector<int> splitsByCount;
};

/// Brings `model` to an opset of 13 to 17 (see above). `fileName` locates
/// errors. A model without a default-domain opset is left as it is.
OpsetChange normalizeOpset(onnx::ModelProto &model,
                           const std::string &fileName);

} // namespace spyre::compiler
