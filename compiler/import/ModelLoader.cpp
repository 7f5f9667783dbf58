// Loading a model file by its format (ModelLoader.h).
#include "compiler/import/ModelLoader.h"

#include "compiler/import/GraphJson.h"
#include "compiler/import/Onnx.h"
#include "compiler/ir/Parser.h"
#include "support/FileIO.h"

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
  if (ext == ".ir")
    return ModelFormat::IrText;
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
                    ": give a graph JSON (.json), ONNX (.onnx) or textual IR (.ir) model");
    return std::nullopt;
  }
  if (*format == ModelFormat::Onnx) {
    OnnxImportOptions onnxOptions;
    onnxOptions.shapeOverrides = options.shapeOverrides;
    onnxOptions.hostFallback = options.hostFallback;
    return importOnnx(path, onnxOptions, diags);
  }
  if (!options.shapeOverrides.empty()) {
    diags.error(SourceLoc{path}, "shape overrides apply to ONNX models only; a "
                                 "graph JSON or IR model states its shapes");
    return std::nullopt;
  }
  std::unique_ptr<Graph> graph;
  if (*format == ModelFormat::IrText) {
    std::string text;
    try {
      text = readFile(path, kIrTextLimit);
    } catch (const UserError &e) {
      diags.report(e.diagnostic());
      return std::nullopt;
    }
    graph = parseGraph(text, path, diags);
  } else {
    graph = loadGraphJson(path, diags);
  }
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

std::pair<std::string, Shape>
parseShapeOverride(const std::string &text) {
  size_t eq = text.rfind('=');
  auto usage = [&](const std::string &why) {
    return UserError(
        SourceLoc{"--shape"},
        "'" + text + "': " + why +
            " (expected NAME=D0,D1,... with dimensions of at least 1)",
        ExitCode::Usage);
  };
  if (eq == std::string::npos || eq == 0)
    throw usage(eq == 0 ? "the input name is empty" : "no '='");
  Shape shape;
  std::string dims = text.substr(eq + 1);
  size_t start = 0;
  while (!dims.empty() && start <= dims.size()) {
    size_t comma = dims.find(',', start);
    std::string d = dims.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    bool digits = !d.empty() && d.size() <= 12 &&
                  d.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoll(d) < 1)
      throw usage("dimension '" + d + "' is not a positive integer");
    shape.push_back(std::stoll(d));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return {text.substr(0, eq), shape};
}

ModelLoadOptions
shapeOverrideOptions(const std::vector<std::string> &shapes) {
  ModelLoadOptions options;
  for (const std::string &text : shapes) {
    auto [name, shape] = parseShapeOverride(text);
    if (!options.shapeOverrides.emplace(name, shape).second)
      throw UserError(SourceLoc{"--shape"},
                      "input '" + name + "' is given more than once",
                      ExitCode::Usage);
  }
  return options;
}

} // namespace spyre::compiler
