#include "sim/core/TensorIo.h"

#include "numerics/Dlf16.h"
#include "numerics/Half.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace spyre::sim {

namespace {

/// Host element i as float, from an F32 or F16 array.
float hostFloat(const NpyArray &a, uint64_t i) {
  if (a.dtype == NpyDtype::F32) {
    float f;
    std::memcpy(&f, a.data.data() + i * 4, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, a.data.data() + i * 2, 2);
  return half::halfToFloat(h);
}

} // namespace

void writeTensor(const isa::TensorDecl &t, const NpyArray &host,
                 const std::string &fileName, DeviceMemory &memory) {
  // Program tensors have rank 1 at least: a scalar is declared as [1].
  const bool scalar = host.shape.empty() &&
                      t.hostShape == std::vector<int64_t>{1};
  if (host.shape != t.hostShape && !scalar)
    throw UserError(SourceLoc{fileName},
                    "input '" + t.name + "' has shape " + shapeText(host.shape) +
                        " but the program expects " + shapeText(t.hostShape));
  bool isFloat = t.dtype == isa::DType::Dl16 || t.dtype == isa::DType::Fp32;
  bool ok = isFloat ? (host.dtype == NpyDtype::F32 || host.dtype == NpyDtype::F16)
                    : (t.dtype == isa::DType::Int8 ? host.dtype == NpyDtype::I8
                                                   : host.dtype == NpyDtype::I32);
  if (!ok)
    throw UserError(SourceLoc{fileName},
                    "input '" + t.name + "' is " + npyDtypeName(host.dtype) +
                        " but the program's " +
                        std::string(isa::dtypeName(t.dtype)) + " tensor needs " +
                        (isFloat ? "float32 or float16"
                                 : t.dtype == isa::DType::Int8 ? "int8" : "int32"));
  std::string device(t.sizeSticks * isa::kStickBytes, '\0');
  const uint64_t n = isa::elementCount(t.hostShape);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t off = isa::deviceByteOffset(t.hostShape, t.dtype, i);
    switch (t.dtype) {
    case isa::DType::Dl16: {
      uint16_t code = host.dtype == NpyDtype::F16
                          ? dlf16::fromHalf(static_cast<uint16_t>(
                                static_cast<uint8_t>(host.data[i * 2]) |
                                (static_cast<uint8_t>(host.data[i * 2 + 1]) << 8)))
                          : dlf16::fromFloat(hostFloat(host, i));
      std::memcpy(&device[off], &code, 2);
      break;
    }
    case isa::DType::Fp32: {
      float f = hostFloat(host, i);
      std::memcpy(&device[off], &f, 4);
      break;
    }
    case isa::DType::Int8:
      device[off] = host.data[i];
      break;
    case isa::DType::Int32:
      std::memcpy(&device[off], host.data.data() + i * 4, 4);
      break;
    }
  }
  memory.write(t.address * isa::kStickBytes, device.data(), device.size());
}

NpyArray readTensor(const isa::TensorDecl &t, const DeviceMemory &memory) {
  std::string device(t.sizeSticks * isa::kStickBytes, '\0');
  memory.read(t.address * isa::kStickBytes, device.data(), device.size());
  NpyArray out;
  out.shape = t.hostShape;
  const uint64_t n = isa::elementCount(t.hostShape);
  switch (t.dtype) {
  case isa::DType::Dl16:
  case isa::DType::Fp32:
    out.dtype = NpyDtype::F32;
    break;
  case isa::DType::Int8:
    out.dtype = NpyDtype::I8;
    break;
  case isa::DType::Int32:
    out.dtype = NpyDtype::I32;
    break;
  }
  out.data.assign(n * static_cast<uint64_t>(npyDtypeSize(out.dtype)), '\0');
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t off = isa::deviceByteOffset(t.hostShape, t.dtype, i);
    switch (t.dtype) {
    case isa::DType::Dl16: {
      uint16_t code;
      std::memcpy(&code, &device[off], 2);
      float f = dlf16::toFloat(code);
      std::memcpy(&out.data[i * 4], &f, 4);
      break;
    }
    case isa::DType::Fp32:
    case isa::DType::Int32:
      std::memcpy(&out.data[i * 4], &device[off], 4);
      break;
    case isa::DType::Int8:
      out.data[i] = device[off];
      break;
    }
  }
  return out;
}

std::vector<double> readTensorValues(const isa::TensorDecl &t,
                                     const DeviceMemory &memory) {
  SPYRE_ASSERT(t.dtype == isa::DType::Dl16 || t.dtype == isa::DType::Fp32,
               "tensor '" + t.name + "' is not a float tensor");
  NpyArray a = readTensor(t, memory);
  std::vector<double> out(isa::elementCount(t.hostShape));
  for (size_t i = 0; i < out.size(); ++i) {
    float f;
    std::memcpy(&f, a.data.data() + i * 4, 4);
    out[i] = f;
  }
  return out;
}

void writeTensorValues(const isa::TensorDecl &t,
                       const std::vector<double> &values, DeviceMemory &memory) {
  SPYRE_ASSERT(values.size() == isa::elementCount(t.hostShape),
               "value count of tensor '" + t.name + "'");
  NpyArray a;
  a.dtype = NpyDtype::F32;
  a.shape = t.hostShape;
  a.data.assign(values.size() * 4, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    auto f = static_cast<float>(values[i]);
    std::memcpy(a.data.data() + i * 4, &f, 4);
  }
  writeTensor(t, a, "<host op>", memory);
}

HostMemoryEstimate numericsMemory(const isa::Program &program) {
  HostMemoryEstimate e;
  for (const isa::TensorDecl &t : program.tensors) {
    // Scratch pages are allocated only where the program writes them.
    if (t.kind == isa::TensorKind::Scratch)
      continue;
    uint64_t device = saturatingMul(t.sizeSticks, uint64_t{isa::kStickBytes});
    uint64_t bytes = device;
    if (t.kind == isa::TensorKind::Input || t.kind == isa::TensorKind::Output)
      bytes = saturatingAdd(saturatingMul(device, 2),
                            saturatingMul(saturatingElements(t.hostShape), 4));
    e.add(isa::printableName(t.name), bytes);
  }
  return e;
}

std::string tensorFilePath(const std::string &dir,
                           const isa::TensorDecl &tensor) {
  // The name comes from a program file: a name that slipped past the
  // reader must not reach the file system.
  SPYRE_ASSERT(isa::tensorNameProblem(tensor.name, tensor.kind).empty() &&
                   (tensor.kind == isa::TensorKind::Input ||
                    tensor.kind == isa::TensorKind::Output),
               "tensor '" + isa::printableName(tensor.name) +
                   "' has no file name");
  return (fs::path(dir) / (tensor.name + ".npy")).string();
}

void loadInputs(const isa::Program &program, const std::string &dir,
                const std::string &programFile, DeviceMemory &memory) {
  std::set<std::string> inputs;
  for (const isa::TensorDecl &t : program.tensors)
    if (t.kind == isa::TensorKind::Input)
      inputs.insert(t.name);
  if (!inputs.empty() && dir.empty())
    throw UserError(SourceLoc{programFile},
                    "the program has inputs (" + *inputs.begin() +
                        (inputs.size() > 1 ? ", ..." : "") +
                        "); give --inputs DIR with one NAME.npy per input, or "
                        "--timing-only");
  if (dir.empty())
    return;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UserError(SourceLoc{dir}, "inputs folder does not exist");
  std::vector<std::string> entries;
  for (const auto &e : fs::directory_iterator(dir, ec))
    entries.push_back(e.path().filename().string());
  std::sort(entries.begin(), entries.end());
  for (const std::string &name : entries) {
    std::string path = dir + "/" + name;
    if (name.size() < 5 || name.substr(name.size() - 4) != ".npy")
      throw UserError(SourceLoc{path},
                      "not a .npy file; the inputs folder holds one NAME.npy "
                      "per program input");
    std::string tensor = name.substr(0, name.size() - 4);
    if (!inputs.count(tensor)) {
      std::string known;
      for (const std::string &i : inputs)
        known += (known.empty() ? "" : ", ") + i;
      throw UserError(SourceLoc{path}, "names no input of the program (inputs: " +
                                           (known.empty() ? "none" : known) + ")");
    }
  }
  for (const isa::TensorDecl &t : program.tensors) {
    if (t.kind != isa::TensorKind::Input)
      continue;
    std::string path = tensorFilePath(dir, t);
    if (!fs::exists(path, ec))
      throw UserError(SourceLoc{path}, "missing input '" + t.name +
                                           "' (expected this file)");
    writeTensor(t, readNpy(path), path, memory);
  }
}

void saveOutputs(const isa::Program &program, const std::string &dir,
                 const DeviceMemory &memory) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw UserError(SourceLoc{dir}, "cannot create outputs folder: " + ec.message());
  for (const isa::TensorDecl &t : program.tensors)
    if (t.kind == isa::TensorKind::Output)
      writeNpy(tensorFilePath(dir, t), readTensor(t, memory));
}

} // namespace spyre::sim
