// placeholder until the command lands
#include "Commands.h"
namespace spyre::cli {
void addAsmCommands(CLI::App &, Dispatch &) {}
} // namespace spyre::cli
