// Fuzz target `onnx`: the ONNX loader (compiler/import) on arbitrary bytes:
// the protobuf parse, the ONNX checker and shape inference, and the import
// into the graph IR. A graph the importer accepts must verify and print.
#include "FuzzTarget.h"

#include "compiler/import/Onnx.h"
#include "compiler/ir/Printer.h"
#include "compiler/ir/Verifier.h"
#include "support/Diagnostic.h"

#include <onnx/onnx_pb.h>

#include <string>

using namespace spyre;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)))
    return 0;
  DiagnosticEngine diags;
  std::optional<compiler::Graph> graph;
  try {
    graph = compiler::importOnnxModel(model, "fuzz.onnx", {}, diags);
  } catch (const UserError &) {
    return 0;
  }
  if (!graph)
    return 0;
  DiagnosticEngine verify;
  SPYRE_ASSERT(compiler::verifyGraph(*graph, verify),
               "an imported graph does not verify:\n" + verify.str());
  (void)compiler::printGraph(*graph);
  return 0;
}
