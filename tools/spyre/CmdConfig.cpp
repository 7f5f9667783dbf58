// placeholder until the command lands
#include "Commands.h"
namespace spyre::cli {
void addConfigCommand(CLI::App &, Dispatch &) {}
} // namespace spyre::cli
