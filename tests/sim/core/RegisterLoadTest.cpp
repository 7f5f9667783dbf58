// `lr` (a register loaded from an INT32 lane of LX, bounded) and the
// register-based DMA address it feeds: a row of a table selected by an id
// that is in device memory, not in the program; an id outside [0, limit)
// stops the run with an index-out-of-range finding before any address is
// formed from it. `rargmax`: the INT32 index of each row's largest element
// in lane 0 of a stick, ties to the lowest, NaN passed over, count limiting
// the search.
#include "hw/HwConfig.h"
#include "isa/Assembler.h"
#include "isa/Disassembler.h"
#include "isa/Program.h"
#include "sim/core/Machine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace spyre;
using namespace spyre::sim;

namespace {

isa::Program assembleText(const std::string &text) {
  DiagnosticEngine diags;
  isa::Program p = isa::assemble(text, "test.s", hw::builtinConfig(), diags);
  EXPECT_FALSE(diags.hasErrors()) << diags.str();
  return p;
}

void writeWords(Machine &m, uint64_t stick, const void *data, size_t bytes) {
  m.deviceMemory().write(stick * isa::kStickBytes,
                         static_cast<const uint8_t *>(data), bytes);
}

// ids at stick 0 (INT32), a [10, 32] FP32 table at 0x10 (one block: row v
// at stick 0x10 + v), the selected row to 0x40.
const char *const kGather = R"(
.tensor input  ids int32 [4] @ 0x0
.tensor input  table fp32 [10, 32] @ 0x10
.tensor output y fp32 [1, 32] @ 0x40
.core 0
.engine dma.load
    ld      0x0, 0x0
    lr      r1, 0x0, 2, limit=10
    ld      0x1, [r1+0x10]
    signal  c0, 1
    halt
.engine dma.store
    wait    c0, 1
    st      0x40, 0x1
    halt
)";

struct GatherRun {
  std::vector<Finding> findings;
  std::vector<float> row;
};

GatherRun gather(int32_t id) {
  isa::Program p = assembleText(kGather);
  Machine m(hw::builtinConfig(), p, SimOptions{});
  const int32_t ids[32] = {7, 8, id, 9};
  writeWords(m, 0, ids, sizeof ids);
  std::vector<float> table(10 * 32);
  for (size_t i = 0; i < table.size(); ++i)
    table[i] = static_cast<float>(i);
  writeWords(m, 0x10, table.data(), table.size() * 4);
  m.run();
  GatherRun r;
  r.findings = m.findings();
  r.row.resize(32);
  m.deviceMemory().read(0x40 * isa::kStickBytes,
                        reinterpret_cast<uint8_t *>(r.row.data()), 128);
  return r;
}

TEST(RegisterLoad, SelectsTheRowOfAnIdInMemory) {
  for (int32_t id : {0, 3, 9}) {
    GatherRun r = gather(id);
    EXPECT_TRUE(r.findings.empty()) << r.findings.front().str();
    for (int j = 0; j < 32; ++j)
      ASSERT_EQ(r.row[static_cast<size_t>(j)], static_cast<float>(id * 32 + j))
          << "id " << id << " lane " << j;
  }
}

TEST(RegisterLoad, AnIdOutsideTheLimitIsAFinding) {
  for (int32_t id : {10, -1, std::numeric_limits<int32_t>::max()}) {
    GatherRun r = gather(id);
    ASSERT_EQ(r.findings.size(), 1u) << "id " << id;
    const Finding &f = r.findings[0];
    EXPECT_EQ(f.kind, FindingKind::IndexOutOfRange);
    EXPECT_EQ(findingKindName(f.kind), "index-out-of-range");
    EXPECT_NE(f.message.find("index " + std::to_string(id) +
                             " (lane 2) is outside [0, 10)"),
              std::string::npos)
        << f.str();
    // The run stopped: nothing reached the output.
    for (float v : r.row)
      EXPECT_EQ(v, 0.0f);
  }
}

TEST(RegisterLoad, ReadsOfLxNeverWrittenAreFindings) {
  isa::Program p = assembleText(".core 0\n.engine dma.load\n"
                                "    lr r1, 0x5, 0, limit=4\n    halt\n");
  Machine m(hw::builtinConfig(), p, SimOptions{});
  m.run();
  ASSERT_FALSE(m.findings().empty());
  EXPECT_EQ(m.findings()[0].kind, FindingKind::LxUninitRead);
}

TEST(RegisterLoad, ProgramsUsingItAreIsa12Files) {
  isa::Program p = assembleText(kGather);
  EXPECT_EQ(isa::programIsaMinor(p), 2);
  const std::string bytes = isa::writeProgram(p);
  EXPECT_EQ(static_cast<uint8_t>(bytes[10]), 2);
  EXPECT_EQ(isa::writeProgram(isa::readProgram(bytes, "p.spyre")), bytes);
  // Text round trip.
  EXPECT_NE(isa::disassemble(p).find("lr      r1, 0x0, 2, limit=10"),
            std::string::npos)
      << isa::disassemble(p);
}

/// rargmax over rows of FP32 values; returns lane 0 of each result stick
/// after checking that the other 31 lanes are zero.
std::vector<int32_t> rowArgmax(const std::vector<std::vector<float>> &rows,
                               int count) {
  const size_t m = rows.size();
  std::string text = ".tensor input x fp32 [" + std::to_string(m) +
                     ", 64] @ 0x0\n.tensor output y int32 [" +
                     std::to_string(m) + ", 1] @ 0x100\n.core 0\n"
                     ".engine dma.load\n    ld 0x0, 0x0, run=" +
                     std::to_string(2 * m) +
                     "\n    signal c0, 1\n    halt\n.engine sfu.0\n"
                     "    wait c0, 1\n    rargmax 0x40, 0x0, n=2, m=" +
                     std::to_string(m) + ", ss=2, count=" +
                     std::to_string(count) +
                     ", fmt=f32\n    signal c1, 1\n    halt\n"
                     ".engine dma.store\n    wait c1, 1\n    st 0x100, 0x40, "
                     "run=" +
                     std::to_string(m) + "\n    halt\n";
  isa::Program p = assembleText(text);
  Machine mach(hw::builtinConfig(), p, SimOptions{});
  // x [m, 64] FP32 in its default layout: block b of row r at b*m + r; the
  // LX copy is loaded as is, so a row's two blocks are m sticks apart...
  // which rargmax reads as consecutive: store each row's blocks together.
  std::vector<float> mem(2 * m * 32);
  for (size_t r = 0; r < m; ++r)
    for (size_t j = 0; j < 64; ++j)
      mem[(2 * r + j / 32) * 32 + j % 32] = rows[r][j];
  writeWords(mach, 0, mem.data(), mem.size() * 4);
  mach.run();
  EXPECT_TRUE(mach.findings().empty()) << mach.findings().front().str();
  std::vector<int32_t> out;
  for (size_t r = 0; r < m; ++r) {
    int32_t lanes[32];
    mach.deviceMemory().read((0x100 + r) * isa::kStickBytes,
                             reinterpret_cast<uint8_t *>(lanes), 128);
    for (int j = 1; j < 32; ++j)
      EXPECT_EQ(lanes[j], 0);
    out.push_back(lanes[0]);
  }
  return out;
}

TEST(RowArgmax, LowestIndexOfTheLargestAndNanPassedOver) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::vector<float>> rows(4, std::vector<float>(64, -1.0f));
  rows[0][5] = 3;
  rows[0][40] = 3; // a tie: 5 wins
  rows[1][63] = 2; // the last lane of the second stick
  rows[2][0] = nan;
  rows[2][1] = -0.5f; // NaN passed over
  for (float &v : rows[3])
    v = nan; // all NaN: 0
  EXPECT_EQ(rowArgmax(rows, 0), (std::vector<int32_t>{5, 63, 1, 0}));
  // count = 40: lane 40 and beyond are not searched.
  rows[0][5] = -2;
  EXPECT_EQ(rowArgmax(rows, 40)[0], 0);
  EXPECT_EQ(rowArgmax(rows, 41)[0], 40);
}

} // namespace
