// The `fuse-gated-matmul` pass: the gated product of a SwiGLU MLP,
//
//   mul(silu(matmul(x, Wg)), matmul(x, Wu))      (the product in either order)
//
// becomes one gated_matmul(x, Wg, Wu), whose kernel reads x once for both
// products and stores only the gated result (codegen GatedMatmulKernel.cpp):
// the two products and the elementwise pass over them never reach device
// memory. It runs after canonicalize, which has made the x * sigmoid(x)
// spelling silu, so graphs from every importer (config.json, graph JSON,
// ONNX) meet it in this form.
//
// The rewrite needs: both matmuls read the same x with the same transpose
// attributes, their weights have the same shape and no batch dims (one
// weight for every row), the intermediate values (both products and the
// silu) feed nothing else and are no graph outputs, and the mul does not
// broadcast. The fused op takes the mul's op and result names.
//
// Postcondition: no such pattern is left.
#pragma once

#include "compiler/pm/Pass.h"

namespace spyre::compiler {

const PassInfo &fuseGatedMatmulPass();

} // namespace spyre::compiler
