// `spyre asm` (assembly text to a program file) and `spyre disasm` (program
// file to canonical assembly text).
#include "Commands.h"
#include "ConfigOptions.h"

#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "isa/Disassembler.h"
#include "isa/Program.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <iostream>
#include <memory>

namespace spyre::cli {

namespace {

struct AsmOptions {
  std::string input;
  std::string output;
  hw::ConfigSource config;
};

/// 1234567 -> "1,234,567".
std::string withCommas(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

/// `dir/x.s` -> `dir/x.spyre`; any other name gets `.spyre` appended.
std::string defaultOutput(const std::string &input) {
  std::string base = input;
  size_t slash = base.find_last_of('/');
  size_t dot = base.find_last_of('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
    base.resize(dot);
  return base + ".spyre";
}

int runAsm(const AsmOptions &opts) {
  std::string output = opts.output.empty() ? defaultOutput(opts.input)
                                           : opts.output;
  checkNotAnInput({output}, {opts.input, opts.config.path});
  hw::HwConfig config = hw::loadConfig(opts.config);
  std::string text = readFile(opts.input, kAssemblyLimit);
  DiagnosticEngine diags;
  isa::Program program = isa::assemble(text, opts.input, config, diags);
  if (diags.hasErrors()) {
    std::cerr << diags.str();
    return static_cast<int>(ExitCode::BadInput);
  }
  std::string bytes = isa::writeProgram(program);
  writeFileAtomic(output, bytes);
  // With the program on standard output, the line about it goes to the side.
  (isStdout(output) ? std::cerr : std::cout)
            << output << ": " << program.streams.size() << " streams, "
            << withCommas(program.instructionCount()) << " instructions, "
            << withCommas(bytes.size()) << " bytes (config "
            << hw::fingerprintString(program.configFingerprint) << ")\n";
  return static_cast<int>(ExitCode::Ok);
}

int runDisasm(const AsmOptions &opts) {
  checkNotAnInput({opts.output}, {opts.input});
  std::string bytes = readFile(opts.input, kProgramFileLimit);
  isa::Program program = isa::readProgram(bytes, opts.input);
  std::string text = isa::disassemble(program);
  if (opts.output.empty()) {
    std::cout << text;
    return static_cast<int>(ExitCode::Ok);
  }
  writeFileAtomic(opts.output, text);
  return static_cast<int>(ExitCode::Ok);
}

} // namespace

void addAsmCommands(CLI::App &app, Dispatch &dispatch) {
  auto asmOpts = std::make_shared<AsmOptions>();
  CLI::App *as = app.add_subcommand(
      "asm", "Assemble Spyre assembly text into a program file");
  as->add_option("input", asmOpts->input, "Assembly file (.s)")->required();
  as->add_option("-o,--output", asmOpts->output,
                 "Program file to write (default: the input name with "
                 ".spyre; -: standard output)");
  addConfigOptions(as, asmOpts->config);
  as->callback([&dispatch, asmOpts] {
    dispatch.run = [asmOpts] { return runAsm(*asmOpts); };
  });

  auto disOpts = std::make_shared<AsmOptions>();
  CLI::App *dis = app.add_subcommand(
      "disasm", "Print a program file as canonical assembly text");
  dis->add_option("input", disOpts->input, "Program file (.spyre)")->required();
  dis->add_option("-o,--output", disOpts->output,
                  "Assembly file to write (default or -: standard output)");
  dis->callback([&dispatch, disOpts] {
    dispatch.run = [disOpts] { return runDisasm(*disOpts); };
  });
}

} // namespace spyre::cli
