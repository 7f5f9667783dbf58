// The graphs of the benchmark shapes (bench/CompilerBench.cpp: matmuls,
// batched matmuls, softmax, layer norm, the encoder layer, a relu chain)
// and the example models (examples/models), for the tests that compile
// every one of them (ProgramBytesTest.cpp, EstimateTest.cpp).
#pragma once

#include "compiler/ir/Graph.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace spyre::compiler {

/// The example models, as paths under examples/models/.
inline const char *const kExampleModels[] = {
    "bert_encoder/model.onnx", "gpt2_layer/model.json",
    "gpt_block/model.json",    "gpt_decoder/model.onnx",
    "llama_block/model.onnx",  "mlp_block/model.json",
    "norm_softmax/model.json", "torch_mlp/model.onnx"};

/// A benchmark shape: its name (`matmul [1024, 1024, 1024]`) and graph.
using BenchShape = std::pair<std::string, std::unique_ptr<Graph>>;

/// Every shape of bench/CompilerBench.cpp, in the order of
/// tests/golden/compiler/bench-programs.txt.
std::vector<BenchShape> benchShapes();

} // namespace spyre::compiler
