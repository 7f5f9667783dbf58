// Reading ONNX tensor values (what is read and why it may fail: OnnxTensor.h).
#include "compiler/import/OnnxTensor.h"

#include "compiler/ir/Types.h"
#include "numerics/Half.h"

#include <bit>
#include <cstring>

namespace spyre::compiler {

namespace {

using onnx::TensorProto;

/// Bytes per element in `raw_data`, 0 for types without a fixed size.
size_t rawElementBytes(int32_t type) {
  switch (type) {
  case TensorProto::UINT8:
  case TensorProto::INT8:
  case TensorProto::BOOL:
    return 1;
  case TensorProto::UINT16:
  case TensorProto::INT16:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    return 2;
  case TensorProto::FLOAT:
  case TensorProto::INT32:
  case TensorProto::UINT32:
    return 4;
  case TensorProto::INT64:
  case TensorProto::UINT64:
  case TensorProto::DOUBLE:
    return 8;
  default:
    return 0;
  }
}

/// Little-endian unsigned integer of `n` bytes at `p`, whatever the host.
uint64_t loadLe(const char *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;)
    v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

/// The value of one element stored as the unsigned bits `bits` (as raw_data
/// and int32_data hold it).
double fromBits(int32_t type, uint64_t bits) {
  switch (type) {
  case TensorProto::FLOAT:
    return std::bit_cast<float>(static_cast<uint32_t>(bits));
  case TensorProto::DOUBLE:
    return std::bit_cast<double>(bits);
  case TensorProto::FLOAT16:
    return half::halfToFloat(static_cast<uint16_t>(bits));
  case TensorProto::BFLOAT16:
    return std::bit_cast<float>(static_cast<uint32_t>(bits & 0xFFFF) << 16);
  case TensorProto::INT8:
    return static_cast<int8_t>(bits);
  case TensorProto::INT16:
    return static_cast<int16_t>(bits);
  case TensorProto::INT32:
    return static_cast<int32_t>(bits);
  case TensorProto::INT64:
    return static_cast<double>(static_cast<int64_t>(bits));
  case TensorProto::BOOL:
    return bits != 0 ? 1.0 : 0.0;
  default: // unsigned types
    return static_cast<double>(bits);
  }
}

} // namespace

std::string onnxTypeName(int32_t dataType) {
  if (!TensorProto::DataType_IsValid(dataType))
    return "type " + std::to_string(dataType);
  return TensorProto::DataType_Name(
      static_cast<TensorProto::DataType>(dataType));
}

bool isOnnxIntegerType(int32_t dataType) {
  switch (dataType) {
  case TensorProto::UINT8:
  case TensorProto::INT8:
  case TensorProto::UINT16:
  case TensorProto::INT16:
  case TensorProto::INT32:
  case TensorProto::INT64:
  case TensorProto::UINT32:
  case TensorProto::UINT64:
  case TensorProto::BOOL:
    return true;
  default:
    return false;
  }
}

std::optional<OnnxTensorValues> readOnnxTensor(const TensorProto &tensor,
                                               std::string &why) {
  OnnxTensorValues out;
  out.dataType = tensor.data_type();
  if (tensor.data_location() == TensorProto::EXTERNAL) {
    why = "its data is stored in an external file, which is not supported";
    return std::nullopt;
  }
  size_t elementBytes = rawElementBytes(out.dataType);
  if (elementBytes == 0) {
    why =
        "its element type " + onnxTypeName(out.dataType) + " holds no numbers";
    return std::nullopt;
  }
  int64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0) {
      why = "dimension " + std::to_string(d) + " is negative";
      return std::nullopt;
    }
    if (d > 0 && count > kMaxElements / d) {
      why = "it has more than 2^40 elements";
      return std::nullopt;
    }
    count *= d;
    out.dims.push_back(d);
  }
  auto n = static_cast<size_t>(count);
  bool integer = isOnnxIntegerType(out.dataType);
  auto wrongSize = [&](const char *field, size_t got) {
    why = std::string(field) + " holds " + std::to_string(got) +
          (std::string(field) == "raw_data" ? " bytes" : " values") + " for " +
          std::to_string(n) + " elements";
    return std::nullopt;
  };

  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (raw.size() != n * elementBytes)
      return wrongSize("raw_data", raw.size());
    out.values.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      uint64_t bits = loadLe(raw.data() + i * elementBytes, elementBytes);
      out.values.push_back(fromBits(out.dataType, bits));
      if (!integer)
        continue;
      // Sign-extend the signed types; unsigned ones are already right.
      int64_t v = static_cast<int64_t>(bits);
      if (out.dataType == TensorProto::INT8)
        v = static_cast<int8_t>(bits);
      else if (out.dataType == TensorProto::INT16)
        v = static_cast<int16_t>(bits);
      else if (out.dataType == TensorProto::INT32)
        v = static_cast<int32_t>(bits);
      else if (out.dataType == TensorProto::BOOL)
        v = bits != 0;
      out.ints.push_back(v);
    }
    return out;
  }

  switch (out.dataType) {
  case TensorProto::FLOAT:
    if (static_cast<size_t>(tensor.float_data_size()) != n)
      return wrongSize("float_data",
                       static_cast<size_t>(tensor.float_data_size()));
    for (float f : tensor.float_data())
      out.values.push_back(f);
    return out;
  case TensorProto::DOUBLE:
    if (static_cast<size_t>(tensor.double_data_size()) != n)
      return wrongSize("double_data",
                       static_cast<size_t>(tensor.double_data_size()));
    for (double d : tensor.double_data())
      out.values.push_back(d);
    return out;
  case TensorProto::INT64:
    if (static_cast<size_t>(tensor.int64_data_size()) != n)
      return wrongSize("int64_data",
                       static_cast<size_t>(tensor.int64_data_size()));
    for (int64_t v : tensor.int64_data()) {
      out.values.push_back(static_cast<double>(v));
      out.ints.push_back(v);
    }
    return out;
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    if (static_cast<size_t>(tensor.uint64_data_size()) != n)
      return wrongSize("uint64_data",
                       static_cast<size_t>(tensor.uint64_data_size()));
    for (uint64_t v : tensor.uint64_data()) {
      out.values.push_back(static_cast<double>(v));
      out.ints.push_back(static_cast<int64_t>(v));
    }
    return out;
  default:
    // Every other type is stored one element per int32_data entry (float16
    // and bfloat16 as their bit patterns).
    if (static_cast<size_t>(tensor.int32_data_size()) != n)
      return wrongSize("int32_data",
                       static_cast<size_t>(tensor.int32_data_size()));
    for (int32_t v : tensor.int32_data()) {
      auto bits = static_cast<uint64_t>(static_cast<uint32_t>(v));
      bool isFloat = out.dataType == TensorProto::FLOAT16 ||
                     out.dataType == TensorProto::BFLOAT16;
      out.values.push_back(isFloat ? fromBits(out.dataType, bits)
                           : out.dataType == TensorProto::BOOL
                               ? (v != 0 ? 1.0 : 0.0)
                               : static_cast<double>(v));
      if (integer)
        out.ints.push_back(out.dataType == TensorProto::BOOL ? (v != 0) : v);
    }
    return out;
  }
}

} // namespace spyre::compiler
