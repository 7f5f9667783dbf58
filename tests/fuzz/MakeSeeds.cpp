// Build-time helper of the fuzz targets.
//
//   make-seeds programs OUTDIR FILE.s...  assembles each file with the
//       built-in config into OUTDIR/<stem>.spyre: the `program` target's
//       seeds, always in the current file format.
//   make-seeds deep-host-program OUTFILE  writes a program whose host op's
//       attributes nest JSON kDeepSeedLevels deep (a valid checksum, as
//       writeProgram makes it): the depth bomb of the program reader.
//   make-seeds deep-onnx OUTFILE          writes an ONNX model whose `If`
//       nodes nest subgraphs kDeepOnnxLevels deep, as protobuf bytes
//       written by hand (a parser that recursed without a limit would
//       overflow the stack): the depth bomb of the ONNX loader.
//   make-seeds asm-dict OUTFILE           writes a libFuzzer dictionary of
//       the assembly's words (mnemonics, operand keywords, enum values,
//       engines, dtypes, tensor kinds, directives) from the instruction
//       table, so it never falls behind the ISA.
#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "isa/InstrTable.h"
#include "isa/Program.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

using namespace spyre;

namespace {

int makePrograms(int argc, char **argv) {
  std::filesystem::path out(argv[2]);
  std::filesystem::create_directories(out);
  for (int i = 3; i < argc; ++i) {
    std::filesystem::path src(argv[i]);
    DiagnosticEngine diags;
    isa::Program p = isa::assemble(readFile(src.string(), kTextFileLimit), src.string(),
                                   hw::builtinConfig(), diags);
    if (diags.hasErrors()) {
      std::fputs(diags.str().c_str(), stderr);
      return 1;
    }
    writeFileAtomic((out / src.stem()).string() + ".spyre", isa::writeProgram(p));
  }
  return 0;
}

/// Deep enough to be refused (support/Nesting.h), small enough for a seed.
constexpr size_t kDeepSeedLevels = 10000;

int makeDeepHostProgram(const std::string &path) {
  DiagnosticEngine diags;
  isa::Program p = isa::assemble(
      ".tensor input x fp32 [1, 32] @ 0x0\n"
      ".tensor output y fp32 [1, 32] @ 0x1\n"
      ".host \"cos\" \"Cos\" \"{}\" in x out y flops 32\n"
      ".core 0\n.engine dma.load\n host 0\n halt\n",
      "deep-host.s", hw::builtinConfig(), diags);
  if (diags.hasErrors()) {
    std::fputs(diags.str().c_str(), stderr);
    return 1;
  }
  p.hostOps.at(0).attrs = "{\"a\":" + std::string(kDeepSeedLevels, '[') +
                          std::string(kDeepSeedLevels, ']') + "}";
  writeFileAtomic(path, isa::writeProgram(p));
  return 0;
}

void putVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

/// A length-delimited protobuf field.
std::string bytesField(uint32_t number, const std::string &payload) {
  std::string out;
  putVarint(out, (uint64_t{number} << 3) | 2);
  putVarint(out, payload.size());
  return out + payload;
}

std::string varintField(uint32_t number, uint64_t value) {
  std::string out;
  putVarint(out, uint64_t{number} << 3);
  putVarint(out, value);
  return out;
}

constexpr int kDeepOnnxLevels = 2000;

int makeDeepOnnx(const std::string &path) {
  // onnx.proto's field numbers: GraphProto node 1, name 2; NodeProto op_type
  // 4, attribute 5; AttributeProto name 1, g 6, type 20 (GRAPH = 5);
  // ModelProto ir_version 1, graph 7, opset_import 8 (version 2).
  std::string graph = bytesField(2, "g");
  for (int level = 0; level < kDeepOnnxLevels; ++level) {
    const std::string attr = bytesField(1, "then_branch") +
                             varintField(20, 5) + bytesField(6, graph);
    const std::string node = bytesField(4, "If") + bytesField(5, attr);
    graph = bytesField(1, node) + bytesField(2, "g");
  }
  writeFileAtomic(path, varintField(1, 8) +
                            bytesField(8, varintField(2, 17)) +
                            bytesField(7, graph));
  return 0;
}

int makeAsmDict(const std::string &path) {
  std::set<std::string> words = {".program", ".core", ".engine", ".op",
                                 ".tensor", "self", "@", "[", "]", ",",
                                 ";", ":", "0x", "r1+", "c1", "=", "\""};
  for (const isa::InstrDesc &d : isa::instructionTable()) {
    words.insert(std::string(d.mnemonic));
    for (const isa::FieldDesc &f : d.fields) {
      if (f.form != isa::FieldForm::Positional)
        words.insert(std::string(f.name) + "=");
      for (std::string_view v : f.enumValues)
        words.insert(std::string(v));
    }
  }
  for (int e = 0; e < isa::kNumEngines; ++e)
    words.insert(std::string(isa::engineName(static_cast<isa::Engine>(e))));
  for (int t = 0; t < isa::kNumDTypes; ++t)
    words.insert(std::string(isa::dtypeName(static_cast<isa::DType>(t))));
  for (int k = 0; k < isa::kNumTensorKinds; ++k)
    words.insert(std::string(isa::tensorKindName(static_cast<isa::TensorKind>(k))));
  std::string text;
  for (const std::string &w : words) {
    text += "\"";
    for (char c : w) {
      if (c == '"' || c == '\\')
        text += '\\';
      text += c;
    }
    text += "\"\n";
  }
  writeFileAtomic(path, text);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "programs" && argc >= 3)
      return makePrograms(argc, argv);
    if (mode == "deep-host-program" && argc == 3)
      return makeDeepHostProgram(argv[2]);
    if (mode == "asm-dict" && argc == 3)
      return makeAsmDict(argv[2]);
    if (mode == "deep-onnx" && argc == 3)
      return makeDeepOnnx(argv[2]);
    std::fputs("usage: make-seeds programs OUTDIR FILE.s... | "
               "deep-host-program OUTFILE | asm-dict OUTFILE | deep-onnx OUTFILE\n",
               stderr);
    return 2;
  } catch (const UserError &e) {
    std::fprintf(stderr, "%s\n", e.diagnostic().str().c_str());
    return 1;
  }
}
