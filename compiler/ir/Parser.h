// Reads the textual IR that Printer.h writes (grammar in docs/ir.md).
//
// The parser checks as it reads, so each error points at the token that is
// wrong: an undefined or redefined value, an unknown op, an attribute the
// op's schema does not have, operands whose shapes the op rejects, a result
// type that differs from what inference gives. Errors are
// `file:line:col: error: message` with the source line and a caret; the
// first one stops the parse. A graph that parses also verifies.
#pragma once

#include "compiler/ir/Graph.h"
#include "support/Diagnostic.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace spyre::compiler {

/// Constant data by digest, for reading IR that names data it does not
/// print (`data<0x...>`): usually the graph the text was printed from.
class ConstantPool {
public:
  void add(ConstantDataPtr data);
  /// Adds the data of every constant of `graph`.
  void addGraph(const Graph &graph);
  /// The data with this digest, or nullptr.
  ConstantDataPtr find(uint64_t digest) const;

private:
  std::map<uint64_t, ConstantDataPtr> byDigest_;
};

/// Parses a graph; returns nullptr after reporting the first error.
/// `pool` supplies the data of constants printed as `data<0x...>`.
std::unique_ptr<Graph> parseGraph(std::string_view text,
                                  const std::string &fileName,
                                  DiagnosticEngine &diags,
                                  const ConstantPool *pool = nullptr);

/// Parses one attribute value (`3`, `[1, 2]`, `{layout = {dims = [0]}}`),
/// the whole text; nullopt after reporting an error.
std::optional<Attribute> parseAttribute(std::string_view text,
                                        const std::string &fileName,
                                        DiagnosticEngine &diags);

} // namespace spyre::compiler
