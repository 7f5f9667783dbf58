// Loading a model file by its format (ModelLoader.h).
#include "compiler/import/ModelLoader.h"

#include "compiler/import/GraphJson.h"
#include "compiler/import/Onnx.h"

#include <algorithm>
#include <filesystem>

namespace spyre::compiler {

std::optional<ModelFormat> modelFormatOf(const std::string &path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  });
  if (ext == ".json")
    return ModelFormat::GraphJson;
  if (ext == ".onnx")
    return ModelFormat::Onnx;
  return std::nullopt;
}

std::optional<Graph> loadModel(const std::string &path,
                               const ModelLoadOptions &options,
                               DiagnosticEngine &diags) {
  std::optional<ModelFormat> format = modelFormatOf(path);
  if (!format) {
    std::string ext = std::filesystem::path(path).extension().string();
    diags.error(SourceLoc{path},
                (ext.empty() ? std::string("a model file needs an extension")
                             : "unknown model file type '" + ext + "'") +
                    ": give a graph JSON (.json) or ONNX (.onnx) model");
    return std::nullopt;
  }
  if (*format == ModelFormat::Onnx) {
    OnnxImportOptions onnxOptions;
    onnxOptions.shapeOverrides = options.shapeOverrides;
    return importOnnx(path, onnxOptions, diags);
  }
  if (!options.shapeOverrides.empty()) {
    diags.error(SourceLoc{path}, "shape overrides apply to ONNX models only; a "
                                 "graph JSON model states its shapes");
    return std::nullopt;
  }
  std::unique_ptr<Graph> graph = loadGraphJson(path, diags);
  if (!graph)
    return std::nullopt;
  return std::optional<Graph>(std::move(*graph));
}

Graph loadModelOrThrow(const std::string &path,
                       const ModelLoadOptions &options) {
  DiagnosticEngine diags;
  std::optional<Graph> graph = loadModel(path, options, diags);
  diags.throwIfErrors();
  return std::move(*graph);
}

} // namespace spyre::compiler
