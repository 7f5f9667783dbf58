// What a pipeline compiles for beside the hardware description, and what
// it makes beside the graph. A pipeline that ends in emission (the `emit`
// pass) makes a program; emission reads where the program's inputs and
// outputs live and whether constants carry their data, which are not pass
// options (a pipeline's text cannot hold an address map), and leaves the
// program here. The pass manager owns one target per run
// (PassManager::target()); passes reach it through PassContext::target().
#pragma once

#include "isa/Program.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace spyre::compiler {

/// Graph inputs and outputs that live at fixed device addresses: tensors
/// kept in device memory between programs (weights, a key/value cache;
/// run/Device.h). A placed value is declared at its address in the default
/// layout of its host shape; an output placed where an input is, of the
/// same size, replaces it in place (isa::replacesInPlace). Every other
/// tensor is placed from `firstFree` upward.
struct Placement {
  std::map<std::string, uint64_t> addresses; ///< value name -> sticks
  uint64_t firstFree = 0;                    ///< sticks
};

/// The target of one pipeline run.
struct CompileTarget {
  Placement placement;
  /// false: constant tensors are declared without their data (a program for
  /// a timing-only run).
  bool constantData = true;
  /// The program, once the `emit` pass has run.
  std::optional<isa::Program> program;
};

} // namespace spyre::compiler
