// The whole model as one program whose size does not grow with its layers
// (docs/llm.md#the-whole-model): one decoder layer compiled once and run
// over every layer's weights in a hardware loop.
//
// The step's graph is compiled as up to three pieces: the embedding (the
// lookup of the token ids when the step takes them, and the multiplier when
// the config has one and the step asks for it), one layer (layer 0's
// graph), and the final norm, LM head and greedy next token (when asked
// for). The
// hidden state between layers lives at one address: the layer's input and
// its output are placed there (the output replaces the input in place), so
// each layer reads what the one before it wrote. Each layer's own tensors
// (its weights, and a decode step's cache and new keys and values) are laid
// out at a constant stride from a region start: layer l's are layer 0's
// plus l x stride. In the layer's code every device-memory address inside
// layer 0's tensors (an address field with base r0, or a register loaded
// with `li`) is rewritten relative to a free register that holds the
// region start plus l x stride, and each stream's layer code runs in a
// `loop` over the layers, ending with a chip-wide barrier and an `addi` of
// the stride. The program declares every layer's tensors under their own
// names (model.layers.l....), so it has the inputs and outputs of the step's
// unrolled graph and runs wherever that graph's program runs.
#pragma once

#include "compiler/driver/Compile.h"
#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "llm/LlmConfig.h"
#include "llm/LlmGraph.h"

#include <cstdint>

namespace spyre::llm {

/// Where a persistent device (LlmDevice.h) keeps the tensors a step with a
/// resident cache reads in place: every layer's weights and cache pages in
/// regions of one layout, a constant stride apart.
struct ResidentLayout {
  /// The address of every resident tensor of the step (each layer's
  /// weights and cache tensors, the embedding table, the head's weights);
  /// firstFree: where the step's own tensors may go.
  compiler::Placement placement;
  uint64_t start = 0;  ///< layer 0's region, sticks (above the LX addresses)
  uint64_t stride = 0; ///< between one layer's region and the next's
};

struct LoopedProgram {
  isa::Program program;
  /// Device memory of one layer's own tensors (the loop's stride), sticks.
  uint64_t strideSticks = 0;
  /// Instructions of the layer's code in all streams (the loop bodies).
  uint64_t layerInstructions = 0;
};

/// Compiles the step (shape.layers layers, its embedding and LM head flags)
/// as one program with the layers in a loop. A step with a resident cache
/// needs `resident`, where the device keeps its weights and cache: the
/// layer's own tensors are then layer 0's there, and the loop steps
/// `resident->stride`. The compiler's refusal is a run::CompileError; a
/// layer whose own tensors pass 2^23 sticks (1 GiB, what `addi` can step)
/// or whose code passes a loop body's 65,535 instructions is a UserError.
LoopedProgram compileLoopedModel(const LlmConfig &config,
                                 const StepShape &shape,
                                 const hw::HwConfig &hw, int optLevel,
                                 const ResidentLayout *resident = nullptr);

} // namespace spyre::llm
