// The values of ONNX tensors (initializers, Constant nodes, the .pb files of
// the ONNX test data), read exactly from either of the forms a TensorProto
// may hold them in: `raw_data` (little-endian bytes) or the typed repeated
// fields. Used by the ONNX importer and by tools and tests that read .pb
// tensors; it includes the ONNX protobuf classes, so only code linked
// against libonnx includes it.
#pragma once

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spyre::compiler {

/// A tensor's dimensions and values. Floating-point elements convert to
/// double exactly; integers are kept exactly in `ints` as well (for int64
/// values beyond 2^53, which a double rounds).
struct OnnxTensorValues {
  std::vector<int64_t> dims;
  int32_t dataType = 0; ///< an onnx::TensorProto::DataType
  std::vector<double> values;
  /// The same values exactly, for integer and bool types (empty otherwise).
  std::vector<int64_t> ints;

  int64_t elementCount() const { return static_cast<int64_t>(values.size()); }
};

/// `FLOAT`, `INT64`, ...: how ONNX names an element type in its docs.
std::string onnxTypeName(int32_t dataType);

/// Whether the type is one of ONNX's integer or bool types.
bool isOnnxIntegerType(int32_t dataType);

/// The values of `tensor`, or nullopt with the reason in `why`: external
/// data (see below), a negative dimension, more than 2^40 elements, a data
/// field of the wrong size, or a type without numbers (string, complex).
std::optional<OnnxTensorValues> readOnnxTensor(const onnx::TensorProto &tensor,
                                               std::string &why);

/// Where the data of a tensor stored outside the model lies (ONNX external
/// data: `location`, `offset`, `length` in the tensor's external_data).
struct OnnxExternalData {
  std::string location; ///< as the model gives it, relative to its folder
  std::string path;     ///< the file: the model's folder joined with location
  uint64_t offset = 0;
  uint64_t length = 0;
};

/// Locates and checks the external data of `tensor` (data_location
/// EXTERNAL) for a model in folder `modelDir`, without reading it: the
/// location must be a relative path that stays in the folder (no absolute
/// path, no `..` that leaves it), name a regular file, and hold the
/// tensor's bytes (a fixed-size element type) at offset, within length.
/// nullopt with the reason in `why` otherwise.
std::optional<OnnxExternalData>
locateOnnxExternalData(const onnx::TensorProto &tensor,
                       const std::string &modelDir, std::string &why);

/// Reads the bytes of external data located by locateOnnxExternalData; a
/// UserError naming the file when it can no longer be read as located.
std::string readOnnxExternalData(const OnnxExternalData &data);

/// Bytes this process has read from external data files (a timing-only run
/// reads none: tests check it).
uint64_t onnxExternalBytesRead();

} // namespace spyre::compiler
