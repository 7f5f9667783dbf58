// The inference and verifier hooks of the op table (OpRegistry.cpp), one per
// op family, defined in ShapeInference.cpp. Internal to compiler/ir: other
// code reaches them through OpDef::infer and OpDef::verify.
#pragma once

#include "compiler/ir/InferContext.h"

namespace spyre::compiler::infer {

bool inferMatmul(InferContext &c);
bool inferLinear(InferContext &c);
bool inferBroadcast(InferContext &c);
bool inferSame(InferContext &c);
bool verifyPow(InferContext &c);
bool inferSoftmax(InferContext &c);
bool verifyEpsilon(InferContext &c);
bool inferNorm(InferContext &c);
bool inferReduce(InferContext &c);
bool inferTranspose(InferContext &c);
bool inferReshape(InferContext &c);
bool inferSplit(InferContext &c);
bool inferConcat(InferContext &c);
bool inferSqueeze(InferContext &c);
bool inferUnsqueeze(InferContext &c);
bool inferCausalMask(InferContext &c);
bool inferCausalSoftmax(InferContext &c);
bool verifyCausalSoftmax(InferContext &c);
bool inferAttention(InferContext &c);
bool verifyAttention(InferContext &c);
bool inferRotary(InferContext &c);
bool inferHost(InferContext &c);

} // namespace spyre::compiler::infer
