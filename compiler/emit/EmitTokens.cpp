// Emission of the token ops, embedding and argmax (Emission.h, Emitter.h;
// their kernels are codegen's TokenKernels.cpp).
#include "compiler/emit/Emitter.h"

namespace spyre::compiler::emit_detail {

bool Emitter::emitEmbedding(const Op &op) {
  const TensorRef y = result(op.result());
  const TensorRef table = asDType(ref(op.operand(0)), y.dtype);
  const TensorRef ids = ref(op.operand(1));
  if (!table.isDefault())
    return fail("the table must be in its default layout (rows sticked on "
                "the hidden dimension), got " + table.str());
  if (!ids.isDefault() || !y.isDefault())
    return fail("ids and the result must be in their default layouts");
  // The kernel sees the result as [tokens, hidden].
  const TensorRef rows =
      viewOf(y, {numel(op.operand(1)->type().shape), y.shape.back()});
  beginKernel();
  return rowDone(codegen::emitEmbedding(pb_, table, ids, rows, options()));
}

bool Emitter::emitArgmax(const Op &op) {
  const TensorRef y = result(op.result());
  const TensorRef x = ref(op.operand(0));
  if (!x.isDefault() || !y.isDefault())
    return fail("x and the result must be in their default layouts");
  beginKernel();
  return rowDone(codegen::emitArgmax(pb_, x, y, options()));
}

} // namespace spyre::compiler::emit_detail
