// Every executable that links SystemC must define sc_main (the library's own
// main() calls it). Ours have their own main() and start the kernel with
// sc_start(), so this one is never called; reaching it is a bug.
#include "support/Diagnostic.h"

#include <systemc>

#include <cstdio>

int sc_main(int /*argc*/, char ** /*argv*/) {
  std::fprintf(stderr, "spyre: internal error: sc_main was called\n");
  return static_cast<int>(spyre::ExitCode::Internal);
}
