// Reading ONNX tensor values (what is read and why it may fail: OnnxTensor.h).
#include "compiler/import/OnnxTensor.h"

#include "compiler/ir/Types.h"
#include "numerics/Half.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

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
    why = "its data is stored in an external file, which is only read for "
          "initializers";
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

namespace {

std::atomic<uint64_t> externalBytesRead{0};

/// A decimal offset or length of external data, or nullopt.
std::optional<uint64_t> parseSize(const std::string &text) {
  if (text.empty() || text.size() > 19 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoull(text);
}

} // namespace

std::optional<OnnxExternalData>
locateOnnxExternalData(const TensorProto &tensor, const std::string &modelDir,
                       std::string &why) {
  namespace fs = std::filesystem;
  OnnxExternalData out;
  std::optional<uint64_t> offset = 0, length;
  bool hasLocation = false;
  for (const auto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      out.location = entry.value();
      hasLocation = true;
    } else if (entry.key() == "offset" || entry.key() == "length") {
      std::optional<uint64_t> v = parseSize(entry.value());
      if (!v) {
        why = "external data " + entry.key() + " '" + entry.value() +
              "' is not a byte count";
        return std::nullopt;
      }
      (entry.key() == "offset" ? offset : length) = v;
    }
  }
  if (!hasLocation || out.location.empty()) {
    why = "its data is stored externally, but no location says where";
    return std::nullopt;
  }
  fs::path location(out.location);
  if (location.is_absolute() || location.has_root_name() ||
      location.has_root_directory()) {
    why = "external data location '" + out.location +
          "' is an absolute path; it must be relative to the model's folder";
    return std::nullopt;
  }
  fs::path normal = location.lexically_normal();
  if (!normal.empty() && *normal.begin() == "..") {
    why = "external data location '" + out.location +
          "' leaves the model's folder";
    return std::nullopt;
  }
  out.path = (fs::path(modelDir.empty() ? "." : modelDir) / normal).string();
  size_t elementBytes = rawElementBytes(tensor.data_type());
  if (elementBytes == 0) {
    why = "its element type " + onnxTypeName(tensor.data_type()) +
          " has no fixed size, so it cannot be stored externally";
    return std::nullopt;
  }
  uint64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0 || (d > 0 && count > static_cast<uint64_t>(kMaxElements) /
                                       static_cast<uint64_t>(d))) {
      why = "its dimensions are negative or hold more than 2^40 elements";
      return std::nullopt;
    }
    count *= static_cast<uint64_t>(d);
  }
  const uint64_t bytes = count * elementBytes;
  std::optional<uint64_t> size;
  try {
    size = checkInputFile(out.path, kOnnxDataFileLimit);
  } catch (const UserError &e) {
    why = "external data file '" + out.location + "': " + e.diagnostic().message;
    return std::nullopt;
  }
  if (!size) {
    why = "external data file '" + out.location + "' is not a regular file";
    return std::nullopt;
  }
  if (length && *length != bytes) {
    why = "external data length " + std::to_string(*length) + " is not the " +
          std::to_string(bytes) + " bytes of the tensor";
    return std::nullopt;
  }
  if (*offset > *size || bytes > *size - *offset) {
    why = "external data file '" + out.location + "' has " +
          std::to_string(*size) + " bytes, too few for " +
          std::to_string(bytes) + " bytes at offset " +
          std::to_string(*offset);
    return std::nullopt;
  }
  out.offset = *offset;
  out.length = bytes;
  return out;
}

std::string readOnnxExternalData(const OnnxExternalData &data) {
  auto fail = [&](const std::string &why) {
    return UserError(SourceLoc{data.path},
                     "cannot read external data (" + std::to_string(data.length) +
                         " bytes at offset " + std::to_string(data.offset) +
                         "): " + why);
  };
  std::FILE *f = std::fopen(data.path.c_str(), "rb");
  if (!f)
    throw fail(std::strerror(errno));
  std::string out(static_cast<size_t>(data.length), '\0');
  bool ok = ::fseeko(f, static_cast<off_t>(data.offset), SEEK_SET) == 0 &&
            std::fread(out.data(), 1, out.size(), f) == out.size();
  int err = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (!ok)
    throw fail(err != 0 ? std::strerror(err) : "the file is shorter");
  externalBytesRead += data.length;
  return out;
}

uint64_t onnxExternalBytesRead() { return externalBytesRead.load(); }

} // namespace spyre::compiler
