// `spyre llm` as a user runs it: the tiny Granite config's prefill and decode
// steps, every output checked against the double-precision host reference
// fed the same weights, and the figures the summary states.
#include "testlib/RunTool.h"

#include <gtest/gtest.h>

#include <sstream>

namespace spyre {
namespace {

using test::runSpyre;
using test::ToolResult;

std::string all(const ToolResult &r) {
  return "exit " + std::to_string(r.exitCode) + "\nstdout:\n" + r.out +
         "\nstderr:\n" + r.err;
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

void expectChecked(const ToolResult &r, const std::string &outputs) {
  ASSERT_EQ(r.exitCode, 0) << all(r);
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("check      ok: " + outputs +
                       " outputs within the tolerance"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("findings   0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("host ops   0\n"), std::string::npos) << r.out;
}

TEST(LlmCli, TinyPrefillMatchesTheReference) {
  ToolResult r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--mode",
                           "prefill", "--tokens", "16", "--lm-head",
                           "--embedding", "--check"});
  // logits, per layer the new keys and values, and the greedy next token,
  // which must be the reference's exactly.
  expectChecked(r, "6");
  EXPECT_NE(r.out.find("  next_token"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max |difference| 0, tolerance exact\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("simulated  2 of 2 layers, embedding lookup, embedding "
                       "multiplier, final norm and LM head, greedy next "
                       "token: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("step       prefill: batch 1, 16 new tokens each"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("TTFT       "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("for all 2 layers, simulated, time to first token"),
            std::string::npos)
      << r.out;
}

TEST(LlmCli, TinyPrefillAfterCachedTokensMatchesTheReference) {
  // 2 x (16 + 100) keys: the fused attention over the cache and the new
  // tokens; 64 + 2000 keys of 128: more than one head's LX holds at once,
  // so the op takes them in chunks.
  for (const char *sizes : {"2 16 100", "1 64 2000"}) {
    SCOPED_TRACE(sizes);
    std::istringstream in(sizes);
    std::string batch, tokens, context;
    in >> batch >> tokens >> context;
    ToolResult r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--mode",
                             "prefill", "--batch", batch, "--tokens", tokens,
                             "--context", context, "--check"});
    // The layers' output, per layer the new keys and values.
    expectChecked(r, "5");
    EXPECT_NE(r.out.find("step       prefill: batch " + batch + ", " + tokens +
                         " new tokens each, after " + context + " cached\n"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("+ KV cache "), std::string::npos) << r.out;
  }
}

TEST(LlmCli, TinyDecodeMatchesTheReference) {
  ToolResult r =
      runSpyre({"llm", "examples/llm/tiny-granite.json", "--mode", "decode",
                "--batch", "2", "--context", "100", "--check"});
  expectChecked(r, "5");
  EXPECT_NE(r.out.find("step       decode: batch 2, 1 new token each, "
                       "context 100"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("per-token latency"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+ KV cache 0.4 MB read once at 150 GB/s"),
            std::string::npos)
      << r.out;
}

TEST(LlmCli, TinyLlamaDecodeWithLmHeadMatchesTheReference) {
  ToolResult r = runSpyre({"llm", "examples/llm/tiny-llama.json", "--mode",
                           "decode", "--batch", "3", "--context", "70",
                           "--lm-head", "--check"});
  expectChecked(r, "4"); // logits, new key, new value, next token
  EXPECT_NE(r.out.find("LlamaForCausalLM: 1 layers"), std::string::npos)
      << r.out;
}

TEST(LlmCli, FewerLayersAreExtrapolated) {
  ToolResult r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--mode",
                           "decode", "--context", "64", "--layers", "1",
                           "--timing-only"});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  EXPECT_NE(r.out.find("simulated  1 of 2 layers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("EXTRAPOLATED (the simulated layers x 2/1"),
            std::string::npos)
      << r.out;
}

TEST(LlmCli, UsageErrors) {
  ToolResult r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--mode",
                           "decode", "--layers", "3", "--timing-only"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err), "--layers: error: must be in [1, 2], got 3");
  r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--mode", "decode",
                "--context", "0", "--timing-only"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "--context: error: must be in [1, 1048576], got 0");
  // A count out of its range is named, never taken for the default (a
  // negative or zero --tokens or --context once ran the default step).
  for (const auto &[args, message] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--mode", "prefill", "--tokens", "-3"},
            "--tokens: error: must be in [1, 1048576], got -3"},
           {{"--mode", "prefill", "--tokens", "0"},
            "--tokens: error: must be in [1, 1048576], got 0"},
           {{"--mode", "prefill", "--context", "-1"},
            "--context: error: must be in [0, 1048064], got -1"},
           {{"--mode", "decode", "--context", "-5"},
            "--context: error: must be in [1, 1048576], got -5"},
           {{"--tokens", "0"},
            "--tokens: error: must be in [1, 1048576], got 0"},
           {{"--generate", "1", "--context", "-1"},
            "--context: error: must be in [1, 65536], got -1"}}) {
    std::vector<std::string> argv = {"llm", "examples/llm/tiny-granite.json"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--timing-only");
    r = runSpyre(argv);
    EXPECT_EQ(r.exitCode, 2) << all(r);
    EXPECT_EQ(test::firstLine(r.err), message);
  }
  // Without --mode both steps are checked before either runs.
  r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--context", "0"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "--context: error: must be in [1, 1048576], got 0");
  EXPECT_EQ(r.out, "");
  r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--mode", "sideways"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--mode", "decode",
                "--timing-only", "--check"});
  EXPECT_EQ(r.exitCode, 2) << all(r);  // A negative seed wrapped silently to 2^64 - 1.
  r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--mode", "decode",
                "--seed", "-1"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "spyre: error: --seed: must be a whole number in "
            "0..18446744073709551615, got '-1'");
}

TEST(LlmCli, HostSamplingSendsTheLogitsAndMatchesTheReference) {
  ToolResult r =
      runSpyre({"llm", "examples/llm/tiny-llama.json", "--generate", "2",
                "--prompt", "10", "--host-sampling", "--check"});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  for (const char *line :
       {"sampling   logits to the host (2 bytes a logit), arg-max there",
        "check      ok: tokens identical to the double-precision reference",
        "logits out", "findings   0\n"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

TEST(LlmCli, GenerateMatchesTheReference) {
  // Two sequences of 62 prompt tokens and three decode steps: positions
  // 62, 63 fill the first cache page, 64 starts the second.
  ToolResult r = runSpyre({"llm", "examples/llm/tiny-llama.json", "--generate",
                           "3", "--prompt", "62", "--batch", "2", "--check"});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  EXPECT_EQ(r.err, "");
  for (const char *line :
       {"  prefill   0-61,0-61", "  decode 1  62,62", "  decode 3  64,64",
        "tokens     seq 0: ", "           seq 1: ",
        "check      ok: tokens identical to the double-precision reference",
        "  seq 1: tokens equal, logits ok (1280 values)", "host ops   0\n",
        "sampling   greedy arg-max on the device, one id (4 bytes) per "
        "sequence back\n",
        "findings   0\n"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  EXPECT_NE(r.out.find("TTFT       "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per token  "), std::string::npos) << r.out;
}

TEST(LlmCli, GeneratePagedMatchesTheReference) {
  // Paged, the two sequences' pages interleave in the pool: each prefill
  // takes one page, and position 64 a new one from what is left.
  ToolResult r =
      runSpyre({"llm", "examples/llm/tiny-llama.json", "--generate", "3",
                "--prompt", "62", "--batch", "2", "--paged", "--check"});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  for (const char *line :
       {"(paged: a pool and a block table per sequence)",
        "pages      seq 0: 0 2\n", "           seq 1: 1 3\n",
        "check      ok: tokens identical to the double-precision reference",
        "findings   0\n"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

TEST(LlmCli, ChunkedPrefillMatchesTheReference) {
  // A prompt of 100 in chunks of 48, 48 and 4, each a prefill after the
  // ones before it, paged: the same tokens as the reference's whole
  // prefill, the first from the last chunk.
  ToolResult r = runSpyre({"llm", "examples/llm/tiny-granite.json",
                           "--generate", "3", "--prompt", "100", "--chunk",
                           "48", "--batch", "2", "--paged", "--check"});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  for (const char *line :
       {"  prefill 1/3  0-47,0-47 ", "  prefill 2/3  48-95,48-95 ",
        "  prefill 3/3  96-99,96-99 ", "  decode 1     100,100 ", "TTFT       ",
        " (prefill of 100 tokens x 2 in 3 chunks of at most 48",
        "check      ok: tokens identical to the double-precision reference",
        "host ops   0\n", "findings   0\n"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  // Four tokens per sequence: the last chunk's and three decode steps'.
  const std::string head = "tokens     seq 0: ";
  const size_t tokens = r.out.find(head);
  ASSERT_NE(tokens, std::string::npos) << r.out;
  std::istringstream line(r.out.substr(
      tokens + head.size(), r.out.find('\n', tokens) - tokens - head.size()));
  std::vector<int64_t> ids;
  for (int64_t id = 0; line >> id;)
    ids.push_back(id);
  EXPECT_EQ(ids.size(), 4u) << r.out;
}

TEST(LlmCli, GenerateUsageErrors) {
  ToolResult r = runSpyre({"llm", "examples/llm/tiny-granite.json",
                           "--generate", "0", "--timing-only"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "--generate: error: must be in [1, 65536], got 0");
  r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--generate", "2",
                "--mode", "decode"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "--mode: error: --generate runs a prefill and then decode steps; "
            "it takes no --mode");
  r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--prompt", "8"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "--prompt: error: is the prompt of --generate N");
  r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--generate", "2",
                "--context", "8"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "--context: error: starts the sequences with cached tokens of no "
            "value, which only --timing-only allows");
  r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--generate", "2",
                "--chunk", "0"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "--chunk: error: must be in [1, 65536], got 0");
  r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--generate", "2",
                "--chunk", "16", "--context", "8", "--timing-only"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "--chunk: error: is a chunk of the prompt's prefill; --context "
            "starts without one");
  r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--mode", "prefill",
                "--chunk", "16"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "--chunk: error: is the prefill's chunk of --generate N");
  r = runSpyre(
      {"llm", "examples/llm/tiny-granite.json", "--mode", "decode", "--paged"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "--paged: error: is a cache layout of --generate N");
  r = runSpyre({"llm", "examples/llm/tiny-granite.json", "--check"});
  EXPECT_EQ(r.exitCode, 2) << all(r);
  EXPECT_EQ(test::firstLine(r.err),
            "--check: error: is an option of one step: give --mode prefill or "
            "--mode decode (without --mode, spyre llm times the model's "
            "prefill and decode step)");
}

// Without --mode: the whole model's prefill and decode step, each one
// program with the layers in a loop, simulated (not extrapolated).
TEST(LlmCli, TheWholeModelWithoutAMode) {
  ToolResult r = runSpyre({"llm", "examples/llm/tiny-granite.json"});
  ASSERT_EQ(r.exitCode, 0) << all(r);
  EXPECT_EQ(r.err, "");
  for (const char *line :
       {"step       prefill: batch 1, 512 new tokens each, no cached context",
        "step       decode: batch 4, 1 new token each, context 4096",
        "2 of 2 layers, embedding lookup, embedding multiplier, final norm and "
        "LM head, greedy next token: ",
        "for all 2 layers, simulated, time to first token",
        "for all 2 layers, simulated, per-token latency",
        "one layer's code in a loop over 2 layers\n"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("EXTRAPOLATED"), std::string::npos) << r.out;
  // Both steps, each with no finding and no host op.
  EXPECT_EQ(count(r.out, "findings   0\n"), 2u) << r.out;
  EXPECT_EQ(count(r.out, "host ops   0\n"), 2u) << r.out;
}

} // namespace
} // namespace spyre
