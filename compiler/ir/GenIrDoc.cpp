// spyre-ir-doc: regenerates the op reference inside docs/ir.md from the op
// registry. `spyre-ir-doc` prints the generated section; `spyre-ir-doc
// --update docs/ir.md` rewrites the section in place. A test fails when the
// committed file differs from what this writes.
#include "compiler/ir/IrDoc.h"

#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <cstring>
#include <iostream>

int main(int argc, char **argv) {
  using namespace spyre;
  if (argc == 1) {
    std::cout << compiler::opReferenceMarkdown();
    return 0;
  }
  if (argc != 3 || std::strcmp(argv[1], "--update") != 0) {
    std::cerr << "usage: spyre-ir-doc [--update docs/ir.md]\n";
    return static_cast<int>(ExitCode::Usage);
  }
  try {
    std::optional<std::string> updated =
        compiler::updateOpReference(readFile(argv[2], kTextFileLimit));
    if (!updated)
      throw UserError(SourceLoc{argv[2]},
                      "the op reference markers are missing or out of order");
    writeFileAtomic(argv[2], *updated);
  } catch (const UserError &e) {
    std::cerr << e.diagnostic().str() << "\n";
    return static_cast<int>(e.exitCode());
  }
  return 0;
}
