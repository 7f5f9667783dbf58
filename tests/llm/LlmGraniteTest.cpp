// Granite-3.3-8B at full size, timing only: one decode layer (B = 4, context
// 4096), and the whole model's prefill and decode step (40 layers in a loop,
// the LM head), each compiled and simulated with no host op and no finding,
// the decode step within reach of its memory bound and each program under
// 8 MB (docs/llm.md has the figures).
#include "testlib/Golden.h"
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace spyre {
namespace {

TEST(LlmGranite, DecodeLayerB4L4096) {
  test::ToolResult r = test::runSpyre(
      {"llm", "examples/llm/granite-3.3-8b.json", "--mode", "decode",
       "--batch", "4", "--context", "4096", "--layers", "1", "--timing-only"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("findings   0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host ops   0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory-bound: weights 398.5 MB + KV cache 67.1 MB"),
            std::string::npos)
      << r.out;
  // The share of the bound reached (96.6% in docs/llm.md): a regression
  // well below the documented figure fails here.
  const size_t at = r.out.find("reached    ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const double percent = std::atof(r.out.c_str() + at + 11);
  EXPECT_GT(percent, 90.0) << r.out;
}

/// The number after `key` at each place it appears in `text`.
std::vector<double> numbersAfter(const std::string &text,
                                 const std::string &key) {
  std::vector<double> out;
  for (size_t at = text.find(key); at != std::string::npos;
       at = text.find(key, at + 1))
    out.push_back(std::atof(text.c_str() + at + key.size()));
  return out;
}

TEST(LlmGranite, WholeModelInOneProgramEach) {
  test::ToolResult r =
      test::runSpyre({"llm", "examples/llm/granite-3.3-8b.json"});
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  for (const char *line :
       {"for all 40 layers, simulated, time to first token",
        "for all 40 layers, simulated, per-token latency",
        "40 of 40 layers, embedding lookup, embedding multiplier, final norm "
        "and LM head, greedy next token: "})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  EXPECT_EQ(numbersAfter(r.out, "findings   0\n").size(), 2u) << r.out;
  EXPECT_EQ(numbersAfter(r.out, "host ops   0\n").size(), 2u) << r.out;
  // issue 14's target: each program under 8 MB, its size not growing with
  // the layers (4.1 and 2.1 MB in docs/llm.md).
  const std::vector<double> bytes = numbersAfter(r.out, "program    ");
  ASSERT_EQ(bytes.size(), 2u) << r.out;
  for (double b : bytes)
    EXPECT_LT(b, 8e6) << r.out;
  EXPECT_EQ(numbersAfter(r.out, "one layer's code in a loop over 40 layers")
                .size(),
            2u)
      << r.out;
  // The decode step streams the weights and the cache (96.8%).
  const std::vector<double> reached = numbersAfter(r.out, "reached    ");
  ASSERT_EQ(reached.size(), 2u) << r.out;
  EXPECT_GT(reached[1], 90.0) << r.out;
}

/// The simulated cycles of a `spyre run` or `spyre llm` summary.
uint64_t cyclesOf(const std::string &summary) {
  const size_t at = summary.find("cycles     ");
  EXPECT_NE(at, std::string::npos) << summary;
  return at == std::string::npos
             ? 0
             : std::strtoull(summary.c_str() + at + 11, nullptr, 10);
}

/// Granite-3.3-8B's layer exported as PyTorch writes it
/// (scripts/gen_onnx_models.py --granite-layer) against the config.json
/// form, timing only, with no host op either way: prefill (S = 512) and
/// decode (B = 4, past 4096, with and without present outputs) each take
/// the config form's time to within 5% (issue 14's target; docs/llm.md
/// gives the figures). Decode needs the present outputs made appends
/// (append-outputs) and the keys, held [L, head_dim], turned in LX by the
/// product that reads them.
TEST(LlmGranite, OnnxExportAgainstTheConfigForm) {
  const std::string dir = test::makeTempDir();
  const std::string gen = "/usr/bin/python3 " +
                          test::srcPath("scripts/gen_onnx_models.py") +
                          " --granite-layer ";
  ASSERT_EQ(std::system((gen + dir + "/prefill.onnx").c_str()), 0);
  const std::string decode = " --tokens 1 --past 4096 --batch 4";
  ASSERT_EQ(std::system((gen + dir + "/decode.onnx" + decode).c_str()), 0);
  ASSERT_EQ(std::system(
                (gen + dir + "/decode_np.onnx" + decode + " --no-present")
                    .c_str()),
            0);
  struct Mode {
    const char *file;
    std::vector<std::string> llm;
    double most; ///< the export's time over the config form's, at most
  };
  for (const Mode &m :
       {Mode{"prefill.onnx", {"--mode", "prefill", "--tokens", "512"}, 1.05},
        Mode{"decode.onnx",
             {"--mode", "decode", "--batch", "4", "--context", "4096"},
             1.05},
        Mode{"decode_np.onnx",
             {"--mode", "decode", "--batch", "4", "--context", "4096"},
             1.05}}) {
    SCOPED_TRACE(m.file);
    test::ToolResult exported =
        test::runSpyre({"run", dir + "/" + m.file, "--timing-only"});
    ASSERT_EQ(exported.exitCode, 0) << exported.out << exported.err;
    EXPECT_NE(exported.out.find("findings   0\n"), std::string::npos)
        << exported.out;
    // `spyre run` names host ops only when there are some.
    EXPECT_EQ(exported.out.find("\nhost "), std::string::npos) << exported.out;
    std::vector<std::string> args{"llm", "examples/llm/granite-3.3-8b.json",
                                  "--layers", "1", "--timing-only"};
    args.insert(args.end(), m.llm.begin(), m.llm.end());
    test::ToolResult form = test::runSpyre(args);
    ASSERT_EQ(form.exitCode, 0) << form.out << form.err;
    const double ratio = static_cast<double>(cyclesOf(exported.out)) /
                         static_cast<double>(cyclesOf(form.out));
    EXPECT_GT(ratio, 0.95) << exported.out << form.out;
    EXPECT_LT(ratio, m.most) << exported.out << form.out;
  }
}

} // namespace
} // namespace spyre
