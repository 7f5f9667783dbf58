// spyre-pass-doc: regenerates the pass reference inside docs/passes.md from
// the pass registry. `spyre-pass-doc` prints the generated section;
// `spyre-pass-doc --update docs/passes.md` rewrites the section in place;
// `spyre-pass-doc --text` prints the same reference as plain text. A test
// fails when the committed file differs from what this writes.
#include "compiler/pipeline/PassDoc.h"

#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <cstring>
#include <iostream>

int main(int argc, char **argv) {
  using namespace spyre;
  if (argc == 1) {
    std::cout << compiler::passReferenceMarkdown();
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "--text") == 0) {
    std::cout << compiler::passListText();
    return 0;
  }
  if (argc != 3 || std::strcmp(argv[1], "--update") != 0) {
    std::cerr << "usage: spyre-pass-doc [--text | --update docs/passes.md]\n";
    return static_cast<int>(ExitCode::Usage);
  }
  try {
    std::optional<std::string> updated =
        compiler::updatePassReference(readFile(argv[2], kTextFileLimit));
    if (!updated)
      throw UserError(SourceLoc{argv[2]},
                      "the pass reference markers are missing or out of order");
    writeFileAtomic(argv[2], *updated);
  } catch (const UserError &e) {
    std::cerr << e.diagnostic().str() << "\n";
    return static_cast<int>(e.exitCode());
  }
  return 0;
}
