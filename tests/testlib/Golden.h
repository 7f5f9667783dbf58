// Golden-file comparison. Golden files live under tests/golden/ and are
// regenerated with `scripts/update-golden.sh` (which sets SPYRE_UPDATE_GOLDEN=1);
// read the diff before committing them.
#pragma once

#include <string>

namespace spyre::test {

/// Absolute path of a file in the source tree, e.g. srcPath("examples/asm/x.s").
std::string srcPath(const std::string &relative);

/// Reads a source-tree file; fails the test if it is missing.
std::string readSource(const std::string &relative);

/// Compares `actual` with tests/golden/<name>. With SPYRE_UPDATE_GOLDEN=1 in
/// the environment the golden file is rewritten instead.
void expectGolden(const std::string &actual, const std::string &name);

/// A fresh, empty temporary directory for one test (removed at exit).
std::string makeTempDir();

} // namespace spyre::test
