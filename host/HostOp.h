// Host fallback: reference implementations, in double precision and with
// ONNX semantics, of the ops the device does not run. A model op the
// compiler cannot place on the chip runs here instead; the simulator charges
// the PCIe transfers and the host compute time (docs/onnx.md, "Host
// fallback").
//
// An op is described by its ONNX op type and its attributes as a JSON
// object. Inputs that ONNX passes as tensors but that only parameterise the
// op (Slice's starts/ends/axes/steps, Gather's indices, Pad's pads and
// constant value, Expand's shape, Tile's repeats, Clip's bounds, CumSum's
// axis) are folded into the attributes under their ONNX input names, so the
// op's tensor inputs are all float data. Broadcasting follows NumPy rules.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::host {

using HostShape = std::vector<int64_t>;

/// A row-major tensor of doubles.
struct HostTensor {
  HostShape shape;
  std::vector<double> data;
};

struct HostOp {
  std::string opType;    ///< ONNX op type, `Slice`
  nlohmann::json attrs = nlohmann::json::object();
};

/// What an op makes of inputs of given shapes: output shapes and the work,
/// or why it cannot run.
struct HostInference {
  std::vector<HostShape> outputs;
  /// Floating-point operations of one run (data movement counts 0).
  uint64_t flops = 0;
  std::string error; ///< empty when the op runs

  bool ok() const { return error.empty(); }
};

/// The op types the host runs, sorted.
std::span<const std::string_view> hostOpTypes();
bool isHostOpType(std::string_view opType);

/// Checks the op's attributes and input shapes and infers its outputs.
HostInference inferHostOp(const HostOp &op, std::span<const HostShape> inputs);

/// Why the host cannot run the op on inputs of these shapes, or nullopt.
std::optional<std::string> hostOpUnsupported(const HostOp &op,
                                             std::span<const HostShape> inputs);

/// Floating-point operations of one run (0 when inference fails).
uint64_t hostOpFlops(const HostOp &op, std::span<const HostShape> inputs);

/// Runs the op; its inputs must pass inferHostOp (asserted).
std::vector<HostTensor> runHostOp(const HostOp &op,
                                  std::span<const HostTensor> inputs);

/// Parses `text` as a host op's attribute object; nullopt with `error` set
/// when it is not a JSON object.
std::optional<nlohmann::json> parseHostAttrs(std::string_view text,
                                             std::string &error);

/// The canonical text of an attribute object (keys sorted, no spaces), as
/// the IR and the program file store it.
std::string hostAttrsText(const nlohmann::json &attrs);

} // namespace spyre::host
