// The end-to-end check shared by the compiler driver tests: compile a graph,
// simulate the program with numerics and the schedule checks, and compare
// every output with the host reference in double precision fed the same
// DL16-rounded inputs. The tolerance (docs/compiler.md): an element may
// differ from the reference by depth * 2^-8 * (|reference| + the mean
// |reference| of the output) + 2^-31, depth being the number of DL16
// roundings on the longest path to it.
#pragma once

#include "compiler/driver/Compile.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace spyre::compiler::test {

/// The interval the random inputs are drawn from.
struct Range {
  float lo = -2, hi = 2;
};

/// What a checked run gives back: the compile result (nullopt when it
/// failed, a test failure already) and the simulator's counts.
struct CheckedRun {
  std::optional<CompileResult> compiled;
  uint64_t cycles = 0;
  uint64_t readBytes = 0;  ///< device memory
  uint64_t writeBytes = 0; ///< device memory
};

/// Compiles `graph` with `options`, runs it on random inputs in `range`,
/// checks every output against the reference within `depth` DL16
/// roundings, and that the simulator found nothing.
CheckedRun checkCompiledWith(const Graph &graph, const CompileOptions &options,
                             int depth, Range range = {});

/// checkCompiledWith compiling for, and simulating on, `config`.
CheckedRun checkCompiledFor(const hw::HwConfig &config, const Graph &graph,
                            const CompileOptions &options, int depth,
                            Range range = {});

/// The end-to-end check of a program already compiled from `graph` (by a
/// pipeline of the test's own, say): the same random inputs, reference
/// and tolerance as checkCompiledWith; `label` names the run in failures.
/// The result has no `compiled`.
CheckedRun checkProgram(const Graph &graph, const isa::Program &program,
                        int depth, Range range = {},
                        const std::string &label = "",
                        const hw::HwConfig &config = hw::builtinConfig());

/// A graph from IR text (a test failure, and nullptr, when it does not
/// parse).
std::unique_ptr<Graph> parseGraphText(const std::string &text);

/// checkCompiledWith at `level`; returns the simulated cycles.
uint64_t checkCompiled(const Graph &graph, int level, int depth,
                       Range range = {});

} // namespace spyre::compiler::test
