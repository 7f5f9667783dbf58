// The rows of the op table for the ops that take token ids in or give them
// out: embedding (a gather of table rows by id) and argmax (the id of each
// row's largest element). Kept apart from OpRegistry.cpp, which adds them
// to the table in OpKind order.
#pragma once

#include "compiler/ir/OpRegistry.h"

namespace spyre::compiler {

OpDef embeddingOpDef();
OpDef argmaxOpDef();

} // namespace spyre::compiler
