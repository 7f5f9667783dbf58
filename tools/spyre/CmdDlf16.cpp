// placeholder until the command lands
#include "Commands.h"
namespace spyre::cli {
void addDlf16Command(CLI::App &, Dispatch &) {}
} // namespace spyre::cli
