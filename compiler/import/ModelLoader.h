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

enum class ModelFormat { GraphJson, Onnx };

struct ModelLoadOptions {
  /// Static shapes for model inputs (ONNX only): input name -> shape.
  std::map<std::string, Shape> shapeOverrides;
};

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
