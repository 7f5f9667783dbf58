// The program builder: instructions by field name agree with the assembler,
// loops and labels, provenance, halts and stream order, tensor allocation and
// constants, counters, validation of finished programs, and the layouts
// kernels address tensors with.
#include "KernelHarness.h"

#include "compiler/codegen/Kernels.h"
#include "compiler/codegen/ProgramBuilder.h"
#include "compiler/codegen/TensorRef.h"
#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "isa/Disassembler.h"
#include "numerics/Dlf16.h"

#include <gtest/gtest.h>

#include <cstring>

namespace spyre::codegen {
namespace {

using isa::DType;
using isa::Opcode;
using isa::Engine;
using isa::TensorKind;

const hw::HwConfig &cfg() { return hw::builtinConfig(); }

isa::Program assembleText(const std::string &text) {
  DiagnosticEngine diags;
  isa::Program p = isa::assemble(text, "t.s", cfg(), diags);
  EXPECT_FALSE(diags.hasErrors()) << diags.str();
  return p;
}

TEST(InstrBuilder, TypedFieldsMatchTheAssembler) {
  ProgramBuilder pb(cfg());
  StreamBuilder &l = pb.stream(0, Engine::DmaLoad);
  l.append(instr<Opcode::Ld>().lx(Addr{1, 0x10}).mem(at(0x40)).run(4));
  StreamBuilder &s = pb.stream(0, Engine::Sfu, 1);
  s.append(instr<Opcode::Sub>()
               .dst(at(0x30))
               .src1(at(0x10))
               .src2(Addr{2, -3})
               .n(4)
               .s2(isa::Src2Mode::Stick)
               .count(100)
               .fmt(isa::StickFormat::F32));
  s.append(instrOf<isa::Format::SfuScalar>(Opcode::Muls)
               .dst(at(1))
               .src(at(2))
               .imm(0.1f));
  StreamBuilder &p = pb.stream(0, Engine::Pt, 0);
  p.append(
      instr<Opcode::Mm>().c(at(0xa0)).a(at(0)).b(at(0x20)).m(16).k(128).n(64));
  isa::Program built = pb.finish();
  isa::Program text = assembleText(".core 0\n"
                                   ".engine dma.load\n"
                                   "    ld [r1+0x10], 0x40, run=4\n    halt\n"
                                   ".engine pt.0\n"
                                   "    mm 0xa0, 0x0, 0x20, m=16, k=128, n=64\n"
                                   "    halt\n"
                                   ".engine sfu.1\n"
                                   "    sub 0x30, 0x10, [r2-3], n=4, s2=stick, "
                                   "count=100, fmt=f32\n"
                                   "    muls 0x1, 0x2, 0.1\n    halt\n");
  EXPECT_EQ(isa::writeProgram(built), isa::writeProgram(text));
}

// A setter exists only for the fields of the instruction's format, so a
// field the instruction lacks does not compile.
template <class B>
concept SetsDst = requires(B b) { b.dst(Addr{}); };
template <class B>
concept SetsRun = requires(B b) { b.run(1); };
static_assert(SetsDst<InstrOf<isa::Format::SfuUnary>>);
static_assert(!SetsDst<InstrOf<isa::Format::Load>>);
static_assert(SetsRun<InstrOf<isa::Format::Load>>);
static_assert(!SetsRun<InstrOf<isa::Format::Ring>>);
static_assert(std::is_same_v<decltype(instr<Opcode::Rsum>()),
                             InstrOf<isa::Format::RowReduce>>);

TEST(InstrBuilder, MissingRequiredFieldIsABug) {
  EXPECT_DEATH(instr<Opcode::Mm>().c(at(0)).a(at(0)).b(at(0)).build(),
               "mm needs field m");
  EXPECT_DEATH(instr<Opcode::Ld>().run(0).lx(at(0)).mem(at(0)).build(),
               "ld.run: 0 is out of range");
  // A field the format lacks does not compile; a runtime opcode of the
  // wrong format, or a value of the wrong kind, is a bug caught here.
  EXPECT_DEATH(instrOf<isa::Format::SfuUnary>(Opcode::Add),
               "Add is not of format SfuUnary");
  EXPECT_DEATH(instr<Opcode::Ld>().run(at(1)), "ld.run is not an address");
  EXPECT_DEATH(instr<Opcode::Ld>().lx(3), "ld.lx is not an integer field");
}

TEST(StreamBuilder, LoopsGetLabelsAndEmptyLoopsVanish) {
  ProgramBuilder pb(cfg(), "loops");
  pb.setOp("outer_op");
  StreamBuilder &s = pb.stream(2, Engine::Sfu, 0);
  int r = s.allocReg();
  s.li(r, 0x100);
  s.beginLoop(3);
  s.beginLoop(5);
  s.addi(r, r, 1);
  s.endLoop();
  s.beginLoop(7); // nothing inside: removed
  s.endLoop();
  s.signal(4, 1);
  s.endLoop();
  pb.setOp("");
  s.wait(4, 3);
  s.freeReg(r);
  isa::Program p = pb.finish();
  EXPECT_EQ(isa::disassemble(p), ".program \"loops\"\n"
                                 "\n"
                                 ".core 2\n"
                                 ".engine sfu.0\n"
                                 ".op \"outer_op\"\n"
                                 "    li      r1, 256\n"
                                 "    loop    3, L1\n"
                                 "    loop    5, L0\n"
                                 "    addi    r1, r1, 1\n"
                                 "L0:\n"
                                 "    signal  c4, 1\n"
                                 "L1:\n"
                                 ".op\n"
                                 "    wait    c4, 3\n"
                                 "    halt\n");
  EXPECT_EQ(test::programFileProblem(p), "");
}

TEST(StreamBuilder, LoopLimitsAndRegistersAreChecked) {
  ProgramBuilder pb(cfg());
  StreamBuilder &s = pb.stream(0, Engine::Ring);
  EXPECT_DEATH(s.beginLoop(65536), "loop count 65536");
  for (int i = 0; i < cfg().limits.maxLoopDepth; ++i)
    s.beginLoop(2);
  EXPECT_DEATH(s.beginLoop(2), "loops nested deeper than");
  for (int i = 1; i < isa::kNumRegs; ++i)
    EXPECT_EQ(s.allocReg(), i);
  EXPECT_DEATH(s.allocReg(), "no free register");
  s.freeReg(7);
  EXPECT_EQ(s.allocReg(), 7);
  EXPECT_DEATH(pb.stream(0, Engine::Pt, 2), "unit 2 of pt");
}

TEST(ProgramBuilder, FinishEndsEveryStreamInOrder) {
  ProgramBuilder pb(cfg());
  pb.stream(3, Engine::Ring).signal(0, 1);
  pb.stream(1, Engine::Sfu, 1).signal(0, 1);
  pb.stream(1, Engine::DmaLoad).wait(0, 1);
  isa::Program p = pb.finish();
  ASSERT_EQ(p.streams.size(), 3u);
  EXPECT_EQ(p.streams[0].name(), "core 1 dma.load");
  EXPECT_EQ(p.streams[1].name(), "core 1 sfu.1");
  EXPECT_EQ(p.streams[2].name(), "core 3 ring");
  for (const isa::Stream &s : p.streams)
    EXPECT_EQ(s.code.back().opcode, isa::Opcode::Halt);
  EXPECT_EQ(p.configFingerprint, cfg().fingerprint());
}

TEST(ProgramBuilder, TensorsAreBumpAllocatedAndAligned) {
  ProgramBuilder pb(cfg());
  pb.setAllocator(0x10, 8);
  const auto &a = pb.addTensor("a", TensorKind::Input, DType::Dl16, {3, 100});
  const auto &b = pb.addTensor("b", TensorKind::Output, DType::Fp32, {5});
  const auto &c = pb.addTensor("c", TensorKind::Scratch, DType::Int8, {2, 129});
  EXPECT_EQ(a.address, 0x10u);
  EXPECT_EQ(a.sizeSticks, 6u); // [2, 3, 64]
  EXPECT_EQ(b.address, 0x18u); // 0x16 rounded up to 8
  EXPECT_EQ(b.sizeSticks, 1u);
  EXPECT_EQ(c.address, 0x20u);
  EXPECT_EQ(c.sizeSticks, 4u); // [2, 2, 128]
  EXPECT_EQ(pb.allocate(3), 0x28u);
  EXPECT_EQ(pb.findTensor("b"), &b);
  isa::Program p = pb.finish();
  EXPECT_EQ(test::programFileProblem(p), "");
}

TEST(ProgramBuilder, ConstantsAreStoredInDeviceLayout) {
  ProgramBuilder pb(cfg());
  std::vector<float> v(2 * 70);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i) * 0.5f - 3;
  const auto &w = pb.addConst("w", DType::Dl16, {2, 70}, v);
  // Device [2 blocks, 2 rows, 64]: element (1, 66) is block 1, row 1, lane 2.
  uint16_t code;
  std::memcpy(&code, w.data.data() + (1 * 2 + 1) * 128 + 2 * 2, 2);
  EXPECT_EQ(dlf16::toFloat(code), v[70 + 66]);
  std::memcpy(&code, w.data.data() + (1 * 2 + 1) * 128 + 10 * 2, 2);
  EXPECT_EQ(code, 0u); // padding lane
  uint64_t zeros = pb.zeroSticks(64);
  EXPECT_EQ(zeros, pb.zeroSticks(3));
  isa::Program p = pb.finish();
  EXPECT_EQ(test::programFileProblem(p), "");
  ASSERT_NE(p.findTensor("__zeros"), nullptr);
  EXPECT_EQ(p.findTensor("__zeros")->sizeSticks, 64u);
}

TEST(ProgramBuilder, ReleasedCountersReturnOnlyAfterABarrier) {
  ProgramBuilder pb(cfg());
  int a = pb.allocCounter(5), b = pb.allocCounter(5);
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(pb.allocCounter(6), 0); // counters are per core
  pb.releaseCounter(5, a);
  EXPECT_EQ(pb.allocCounter(5), 2);
  pb.stream(5, Engine::Sfu).signal(1, 1);
  pb.barrierAll();
  EXPECT_EQ(pb.allocCounter(5), 0);
  EXPECT_DEATH(pb.releaseCounter(5, 9), "not held");
  isa::Program p = pb.finish();
  // Every stream of every core takes part in the barrier: DMA load and
  // store, ring, and a PT and an SFU stream per unit.
  EXPECT_EQ(p.streams.size(),
            static_cast<size_t>(cfg().chip.cores *
                                (3 + 2 * cfg().chip.coreletsPerCore)));
  EXPECT_EQ(test::programFileProblem(p), "");
}

TEST(ValidateProgram, NamesWhatBreaksTheConfigLimits) {
  isa::Program p = assembleText(".core 0\n.engine sfu.0\n"
                                "    copy 0x10, 0x20\n    halt\n");
  EXPECT_EQ(validateProgram(p, cfg()), "");
  isa::Program bad = p;
  bad.streams[0].code[0].value[0] = cfg().lxSticks(); // dst offset
  EXPECT_EQ(validateProgram(bad, cfg()),
            "core 0 sfu.0, instruction 0 (copy): dst = 16384 breaks |offset| "
            "below the LX size in sticks (lx.size_bytes / 128)");
  bad = p;
  bad.streams[0].code.pop_back();
  bad.streams[0].provenance.pop_back();
  EXPECT_EQ(validateProgram(bad, cfg()), "core 0 sfu.0 does not end with halt");
  bad = p;
  bad.streams[0].unit = 2;
  EXPECT_EQ(validateProgram(bad, cfg()),
            "core 0 sfu.2 is on a corelet the config does not have");
}

TEST(Layout, StickAddressesOfEveryBlockPosition) {
  TensorRef t;
  t.address = 100;
  t.dtype = DType::Dl16;
  t.shape = {3, 5, 77}; // 2 blocks of the last dim
  EXPECT_TRUE(t.isDefault());
  EXPECT_EQ(t.deviceDims(), (std::vector<int64_t>{2, 3, 5}));
  EXPECT_EQ(t.stickOf({2, 4, 70}), 100u + 1 * 15 + 2 * 5 + 4);
  t.blockPos = 1;
  t.padded = {4, 8};
  EXPECT_EQ(t.deviceDims(), (std::vector<int64_t>{4, 2, 8}));
  EXPECT_EQ(t.sizeSticks(), 64u);
  EXPECT_EQ(t.stickOf({2, 4, 70}), 100u + 2 * 16 + 1 * 8 + 4);
  EXPECT_EQ(t.str(),
            " dl16 [3, 5, 77] @0x64 device [4, 2, 8] (blocks at dim 1)");
  t.blockPos = 2;
  t.padded = {};
  StickMatrix m = StickMatrix::of(t);
  EXPECT_EQ(m.rows, 15);
  EXPECT_EQ(m.rowStride, 2);
  EXPECT_EQ(m.blockStride, 1);
  EXPECT_EQ(m.stick(7, 1), 100 + 7 * 2 + 1);
}

TEST(Layout, PaddedRowsOfAMatrix) {
  TensorRef b;
  b.dtype = DType::Dl16;
  b.shape = {100, 130};
  b.padded = {128};
  StickMatrix m = StickMatrix::of(b);
  EXPECT_EQ(m.rows, 100);
  EXPECT_EQ(m.memRows, 128);
  EXPECT_EQ(m.blockStride, 128);
  EXPECT_EQ(m.lastLanes(), 2);
}

TEST(Kernels, SameInputsGiveTheSameProgramBytes) {
  auto build = [] {
    ProgramBuilder pb(cfg(), "det");
    MatmulArgs args;
    args.a = TensorRef::of(
        pb.addTensor("a", TensorKind::Input, DType::Dl16, {100, 77}));
    args.b = TensorRef::of(
        pb.addTensor("b", TensorKind::Input, DType::Dl16, {77, 129}));
    args.c = TensorRef::of(
        pb.addTensor("c", TensorKind::Output, DType::Dl16, {100, 129}));
    args.transB = false;
    args.bias = TensorRef::of(
        pb.addTensor("bias", TensorKind::Input, DType::Dl16, {129}));
    emitMatmul(pb, args, {});
    pb.barrierAll();
    const auto &y =
        pb.addTensor("y", TensorKind::Output, DType::Dl16, {100, 129});
    emitSoftmax(pb, args.c, TensorRef::of(y), {});
    return isa::writeProgram(pb.finish());
  };
  EXPECT_EQ(build(), build());
}

TEST(Kernels, OptionsPlaceTheKernelOnTheCoresAndLxAsked) {
  ProgramBuilder pb(cfg());
  const auto &x = pb.addTensor("x", TensorKind::Input, DType::Dl16, {64, 100});
  const auto &y = pb.addTensor("y", TensorKind::Output, DType::Dl16, {64, 100});
  KernelOptions opt;
  opt.firstCore = 4;
  opt.cores = 3;
  opt.units = 1;
  opt.lxBase = 1000;
  opt.lxSticks = 2000;
  opt.tileRows = 5;
  opt.op = "my_softmax";
  RowPlan plan = emitSoftmax(pb, TensorRef::of(x), TensorRef::of(y), opt);
  EXPECT_EQ(plan.str(), "core 4: rows [0, 22), 5 tiles of 5\n"
                        "core 5: rows [22, 43), 5 tiles of 5\n"
                        "core 6: rows [43, 64), 5 tiles of 5\n");
  for (int core = 0; core < cfg().chip.cores; ++core) {
    bool used = core >= 4 && core < 7;
    EXPECT_EQ(pb.hasStream(core, Engine::Sfu, 0), used) << core;
    EXPECT_FALSE(pb.hasStream(core, Engine::Sfu, 1)) << core;
    EXPECT_EQ(pb.lxHighWater(core) > 1000, used) << core;
    EXPECT_LE(pb.lxHighWater(core), 3000) << core;
  }
  isa::Program p = pb.finish();
  for (const isa::Stream &s : p.streams)
    EXPECT_EQ(*p.provenanceOf(s, 0), "my_softmax");
  EXPECT_EQ(test::programFileProblem(p), "");
  std::vector<float> xv = test::randomValues(64 * 100, 1, -3, 3, DType::Dl16);
  test::SimResult r = test::simulate(p, {{{"x", xv}}});
  EXPECT_TRUE(r.findings.empty()) << r.findings[0];
}

} // namespace
} // namespace spyre::codegen
