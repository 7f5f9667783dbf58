// spyre-isa-doc: writes the ISA reference generated from the instruction
// table. `spyre-isa-doc -o docs/isa.md` regenerates the committed file; a test
// fails when the committed file differs from this output.
#include "isa/IsaDoc.h"

#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <cstring>
#include <iostream>

int main(int argc, char **argv) {
  std::string text = spyre::isa::isaReferenceMarkdown();
  if (argc == 1) {
    std::cout << text;
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "-o") == 0) {
    try {
      spyre::writeFileAtomic(argv[2], text);
    } catch (const spyre::UserError &e) {
      std::cerr << e.diagnostic().str() << "\n";
      return static_cast<int>(e.exitCode());
    }
    return 0;
  }
  std::cerr << "usage: spyre-isa-doc [-o FILE]\n";
  return static_cast<int>(spyre::ExitCode::Usage);
}
