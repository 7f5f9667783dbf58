// Runs a fuzz target once on every input it is given, without libFuzzer: the
// normal and sanitizer builds use it to replay the seed corpora and the
// inputs that once made a loader fail (tests/fuzz/regressions/<target>/).
//
// Usage: fuzz-replay-<target> PATH...; a folder stands for every file under
// it, in sorted order. A folder that does not exist counts as empty (a target
// with no regression inputs yet), but at least one input must run.
#include "FuzzTarget.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> inputsUnder(const fs::path &path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec))
    return {path};
  std::vector<fs::path> files;
  for (const fs::directory_entry &e : fs::recursive_directory_iterator(path))
    if (e.is_regular_file())
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace

int main(int argc, char **argv) {
  size_t ran = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path arg(argv[i]);
    std::error_code ec;
    if (!fs::exists(arg, ec)) {
      std::printf("skipping %s: does not exist\n", argv[i]);
      continue;
    }
    for (const fs::path &file : inputsUnder(arg)) {
      // Named before it runs, so a crash points at its input.
      std::printf("running %s\n", file.c_str());
      std::fflush(stdout);
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "cannot read %s\n", file.c_str());
        return 1;
      }
      std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in),
                                 std::istreambuf_iterator<char>()};
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++ran;
    }
  }
  std::printf("%zu inputs ran\n", ran);
  if (ran == 0) {
    std::fprintf(stderr, "no inputs: check the paths given\n");
    return 1;
  }
  return 0;
}
