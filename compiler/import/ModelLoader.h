// One entry point for model files: the extension says the format (.json:
// graph JSON, docs/graph-json.md; .onnx: ONNX, docs/onnx.md), and the model
// loads into a verified graph IR. The CLI's graph commands and the compiler
// driver load models through it.
#pragma once

#include "compiler/ir/Graph.h"
#include "support/Diagnostic.h"

#include <map>
#include <optional>
#include <string>

namespace spyre::compiler {

/// By extension: `.json`, `.onnx`, `.ir` (the textual IR, docs/ir.md).
enum class ModelFormat { GraphJson, Onnx, IrText };

struct ModelLoadOptions {
  /// Static shapes for model inputs (ONNX only): input name -> shape.
  std::map<std::string, Shape> shapeOverrides;
  /// ONNX: run nodes the device cannot on the host (OnnxImportOptions).
  bool hostFallback = true;
};

/// `x=3,64` -> {"x", [3, 64]}; `x=` is a scalar. The name is everything
/// before the last '=', so names holding '=' still work. A malformed value
/// is a usage error naming --shape.
std::pair<std::string, Shape>
parseShapeOverride(const std::string &text);

/// The load options of repeated `--shape NAME=D0,D1,...` values; an input
/// given twice is a usage error.
ModelLoadOptions
shapeOverrideOptions(const std::vector<std::string> &shapes);

/// The format of `path` by its extension (case-insensitive), or nullopt.
std::optional<ModelFormat> modelFormatOf(const std::string &path);

/// Loads a model file. Returns nullopt after reporting the first error (an
/// unknown extension names the accepted ones).
std::optional<Graph> loadModel(const std::string &path,
                               const ModelLoadOptions &options,
                               DiagnosticEngine &diags);

/// loadModel for command-line use: the first error is thrown as a
/// UserError (exit code 1).
Graph loadModelOrThrow(const std::string &path,
                       const ModelLoadOptions &options);

} // namespace spyre::compiler
