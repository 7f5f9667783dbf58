// The op table's rows for the ops that take token ids in or give them out:
// embedding (a gather of table rows by id) and argmax (the id of each row's
// largest element), kept apart from OpRegistry.cpp, which adds them to the
// table in OpKind order.
#include "compiler/ir/OpRegistry.h"

namespace spyre::compiler {

namespace {

bool inferEmbedding(InferContext &c) {
  const TensorType &table = c.operand(0), &ids = c.operand(1);
  if (table.rank() != 2)
    return c.operandError(0, c.describeOperand(0) +
                                 " must be [vocab, hidden] (rank 2)");
  if (ids.rank() + 1 > kMaxRank)
    return c.operandError(1, c.describeOperand(1) + " has rank " +
                                 std::to_string(ids.rank()) +
                                 "; the result's would pass " +
                                 std::to_string(kMaxRank));
  Shape shape = ids.shape;
  shape.push_back(table.shape[1]);
  c.addResult({table.elementType, shape});
  return true;
}

bool inferArgmax(InferContext &c) {
  const TensorType &x = c.operand(0);
  if (x.rank() < 1)
    return c.operandError(0, c.describeOperand(0) +
                                 " must have a last dimension to search");
  Shape shape = x.shape;
  shape.back() = 1;
  c.addResult({ElementType::I32, shape});
  return true;
}

} // namespace

OpDef embeddingOpDef() {
  OpDef d{OpKind::Embedding,
          "embedding",
          "Rows of a table selected by integer ids (an embedding lookup, "
          "ONNX Gather on axis 0)",
          {{"table", OperandArity::Required, "[vocab, hidden]"},
           {"ids", OperandArity::Required,
            "i32 ids, any shape, each in [0, vocab)",
            elementTypeBit(ElementType::I32)}},
          kFloatTypes,
          {},
          inferEmbedding,
          nullptr,
          "ids' shape with table's last dimension appended, table's element "
          "type",
          "y[i..., h] = table[ids[i...], h]. An id outside [0, vocab) is an "
          "error of the run: the device kernel checks each id as it reads it "
          "(the `lr` instruction's bound, the simulator's finding "
          "index-out-of-range) and the reference evaluator rejects it, so no "
          "id reads outside the table."};
  return d;
}

OpDef argmaxOpDef() {
  OpDef d{OpKind::Argmax,
          "argmax",
          "Index of the largest element along the last axis (greedy "
          "sampling), keeping the axis",
          {{"x", OperandArity::Required, "the scores (logits)"}},
          kFloatTypes,
          {},
          inferArgmax,
          nullptr,
          "x's shape with the last dimension 1, element type i32",
          "y[i..., 0] = the lowest j with x[i..., j] = max_j' x[i..., j'] "
          "(ties go to the lowest index, NaN elements are passed over; a "
          "row of NaN only gives 0)."};
  d.resultType = ElementType::I32;
  return d;
}

} // namespace spyre::compiler
