// The host reference evaluator: computes what a graph means, in double
// precision, independently of the compiler's lowering and of the simulator.
// It is the answer `--check` compares device results against.
//
// Every op follows the semantics text of its registry row (docs/ir.md). The
// element types of the graph are storage formats: inputs and constants are
// read exactly, and every op computes in double without rounding to f32 or
// f16 in between. Care is taken where double alone is not enough: softmax
// subtracts the maximum before exp, layernorm computes the mean first and
// the variance from it, sums are compensated (Neumaier). Sums run in
// row-major order, so results do not depend on the machine beyond libm's
// exp/erf/tanh (last-bit differences that vanish when rounded to f32).
#pragma once

#include "support/HostMemory.h"
#include "compiler/ir/Graph.h"
#include "support/Npy.h"

#include <map>
#include <string>
#include <vector>

namespace spyre::compiler::ref {

/// A tensor of the evaluator: row-major double values.
struct RefTensor {
  Shape shape;
  std::vector<double> values;

  int64_t elementCount() const { return static_cast<int64_t>(values.size()); }
};

/// Exact conversion of any .npy dtype the project reads.
RefTensor tensorFromNpy(const NpyArray &array);
RefTensor tensorFromConstant(const ConstantData &data);
/// Rounds each value to float32 (nearest, ties to even).
NpyArray toNpyF32(const RefTensor &tensor);

/// Computes one verified op from its operand values (which have the
/// operands' shapes); one tensor per result.
std::vector<RefTensor> evaluateOp(const Op &op,
                                  const std::vector<const RefTensor *> &operands);

using TensorMap = std::map<std::string, RefTensor>;

/// Host memory an evaluation of `graph` takes at its peak: the given inputs
/// and their copies, the constants, and the op results alive at once (all of
/// them with `keepAll`), each element a double.
HostMemoryEstimate evaluationMemory(const Graph &graph, bool keepAll = false);

/// Refuses, before anything is allocated, an evaluation that needs more
/// host memory than the machine has: a UserError at the model file naming
/// the largest tensor. evaluateGraph checks it too; a caller that makes the
/// inputs first calls it before.
void checkEvaluationMemory(const Graph &graph, bool keepAll = false);

/// Runs a verified graph on `inputs` (by input name; each must be present
/// with its input's shape, and no other name may be given: UserError
/// otherwise). Returns the outputs in graph order. With `allValues`, every
/// value of the graph (inputs, constants and op results) is stored there by
/// name; without it, intermediates are freed after their last use.
std::vector<RefTensor> evaluateGraph(const Graph &graph, const TensorMap &inputs,
                                     TensorMap *allValues = nullptr);

} // namespace spyre::compiler::ref
