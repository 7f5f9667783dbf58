// Request traces: both column sets, located errors, and the generator's
// determinism and statistics.
#include "serve/Trace.h"

#include "support/Diagnostic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace spyre::serve {
namespace {

std::string errorOf(const std::string &text) {
  try {
    parseTrace(text, "t.csv");
  } catch (const UserError &e) {
    return e.diagnostic().str();
  }
  return "no error";
}

TEST(Trace, ReadsTheProjectColumns) {
  const std::vector<Request> r = parseTrace(
      "# a comment\narrival_s,prompt_tokens,output_tokens\n0,100,5\n"
      "0.25, 7 ,1\r\n\n1.5,3,2\n",
      "t.csv");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[1].id, 1);
  EXPECT_DOUBLE_EQ(r[1].arrivalS, 0.25);
  EXPECT_EQ(r[1].promptTokens, 7);
  EXPECT_EQ(r[2].outputTokens, 2);
}

TEST(Trace, ReadsTheAzureColumnsRelativeToTheFirstRow) {
  const std::vector<Request> r = parseTrace(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2023-11-16 18:15:46.6805900,374,44\n"
      "2023-11-16 18:15:50.9951690,396,109\n"
      "2023-11-17 00:00:00,10,1\n",
      "azure.csv");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_DOUBLE_EQ(r[0].arrivalS, 0);
  EXPECT_NEAR(r[1].arrivalS, 4.314579, 1e-6);
  // From 18:15:46.68059 to midnight.
  EXPECT_NEAR(r[2].arrivalS, 5 * 3600 + 44 * 60 + 13.31941, 1e-6);
  EXPECT_EQ(r[0].promptTokens, 374);
  EXPECT_EQ(r[1].outputTokens, 109);
}

TEST(Trace, ColumnsInAnyOrderAndExtraColumnsIgnored) {
  const std::vector<Request> r = parseTrace(
      "GeneratedTokens,note,TIMESTAMP,ContextTokens\n5,x,10.5,20\n3,y,12,4\n",
      "t.csv");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_DOUBLE_EQ(r[1].arrivalS, 1.5);
  EXPECT_EQ(r[1].promptTokens, 4);
  EXPECT_EQ(r[0].outputTokens, 5);
}

TEST(Trace, ErrorsAreLocated) {
  EXPECT_EQ(errorOf("arrival_s,prompt_tokens,output_tokens\n0,1x,3\n"),
            "t.csv:2:3: error: prompt_tokens: expected a whole number of "
            "tokens, got '1x'");
  EXPECT_EQ(errorOf("arrival_s,prompt_tokens,output_tokens\n1,1,1\n0.5,1,1\n"),
            "t.csv:3:1: error: arrival time 0.5 s is before the previous "
            "row's 1 s; a trace is in arrival order");
  EXPECT_EQ(errorOf("arrival_s,prompt_tokens\n"),
            "t.csv:1:1: error: the header must name the columns "
            "arrival_s,prompt_tokens,output_tokens (or the Azure trace's "
            "TIMESTAMP,ContextTokens,GeneratedTokens); missing the output "
            "tokens");
  EXPECT_EQ(errorOf("arrival_s,prompt_tokens,output_tokens\n0,1\n"),
            "t.csv:2:3: error: expected 3 cells as in the header, got 2");
  EXPECT_EQ(errorOf("arrival_s,prompt_tokens,output_tokens\n0,1,0\n"),
            "t.csv:2:5: error: a request generates at least one token");
  EXPECT_EQ(errorOf("arrival_s,prompt_tokens,output_tokens\n0,9999999,1\n"),
            "t.csv:2:3: error: prompt_tokens: must be in [0, 1048576], got "
            "9999999");
  EXPECT_EQ(errorOf("arrival_s,prompt_tokens,output_tokens\n-1,1,1\n"),
            "t.csv:2:1: error: arrival time must be in [0, 1e+07] s from the "
            "trace's start, got -1");
  EXPECT_EQ(errorOf("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                    "2023-13-16 18:15:46,1,1\n"),
            "t.csv:2:1: error: TIMESTAMP: expected 'YYYY-MM-DD "
            "HH:MM:SS[.frac]' or seconds, got '2023-13-16 18:15:46'");
  EXPECT_EQ(errorOf(""), "t.csv:1:1: error: empty trace: expected a header, "
                         "then one row per request");
  EXPECT_EQ(errorOf("arrival_s,prompt_tokens,output_tokens\n"),
            "t.csv:1:1: error: the trace has a header but no request");
}

TEST(Trace, ReadsSharedPrefixes) {
  const std::vector<Request> r = parseTrace(
      "arrival_s,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n"
      "0,300,5,7,200\n0.5,90,1,-1,0\n1,250,2,7,200\n",
      "t.csv");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].prefixId, 7);
  EXPECT_EQ(r[0].prefixTokens, 200);
  EXPECT_EQ(r[1].prefixId, -1);
  EXPECT_EQ(r[1].prefixTokens, 0);
  EXPECT_EQ(r[2].prefixId, 7);
  // Without the columns, no request has a prefix.
  EXPECT_EQ(
      parseTrace("arrival_s,prompt_tokens,output_tokens\n0,1,1\n", "t.csv")[0]
          .prefixId,
      -1);
}

TEST(Trace, PrefixErrorsAreLocated) {
  const std::string h =
      "arrival_s,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n";
  EXPECT_EQ(errorOf("arrival_s,prompt_tokens,output_tokens,prefix_id\n"),
            "t.csv:1:1: error: the columns prefix_id and prefix_tokens come "
            "together; only prefix_id is named");
  EXPECT_EQ(errorOf(h + "0,100,1,x,10\n"),
            "t.csv:2:9: error: prefix_id: expected -1 (no prefix) or a whole "
            "number in [0, 1099511627776], got 'x'");
  EXPECT_EQ(errorOf(h + "0,100,1,3,101\n"),
            "t.csv:2:11: error: prefix_tokens: must be in [1, prompt_tokens "
            "= 100], got 101");
  EXPECT_EQ(errorOf(h + "0,100,1,-1,5\n"),
            "t.csv:2:12: error: prefix_tokens: a row without a prefix "
            "(prefix_id -1) has 0, got 5");
  EXPECT_EQ(errorOf(h + "0,100,1,3,64\n1,100,1,3,65\n"),
            "t.csv:3:11: error: prefix_tokens: prefix 3 has 64 tokens on an "
            "earlier row, 65 here");
}

TEST(TraceGen, SharedPrefixesPrecedeEachPromptAndReadBack) {
  GenOptions o;
  o.rate = 5;
  o.prompt = parseLengthDist("uniform:10:20", "--prompt");
  o.output = parseLengthDist("fixed:3", "--output");
  o.count = 40;
  o.prefixTokens = 128;
  o.prefixGroups = 3;
  const std::vector<Request> gen = generateTrace(o);
  std::vector<int> seen(3, 0);
  for (const Request &r : gen) {
    ASSERT_GE(r.prefixId, 0);
    ASSERT_LT(r.prefixId, 3);
    ++seen[static_cast<size_t>(r.prefixId)];
    EXPECT_EQ(r.prefixTokens, 128);
    EXPECT_GE(r.promptTokens, 138);
    EXPECT_LE(r.promptTokens, 148);
  }
  for (int n : seen)
    EXPECT_GT(n, 0);
  const std::string csv = traceCsv(gen);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "arrival_s,prompt_tokens,output_tokens,prefix_id,prefix_tokens");
  const std::vector<Request> back = parseTrace(csv, "gen.csv");
  ASSERT_EQ(back.size(), gen.size());
  for (size_t i = 0; i < gen.size(); ++i) {
    EXPECT_EQ(back[i].prefixId, gen[i].prefixId);
    EXPECT_EQ(back[i].promptTokens, gen[i].promptTokens);
  }
  // The lengths drawn are those of the same trace without prefixes.
  o.prefixGroups = 0;
  o.prefixTokens = 0;
  const std::vector<Request> plain = generateTrace(o);
  for (size_t i = 0; i < gen.size(); ++i)
    EXPECT_EQ(gen[i].promptTokens, plain[i].promptTokens + 128);
}

TEST(TraceGen, SameSeedSameTraceOtherSeedOtherTrace) {
  GenOptions o;
  o.rate = 5;
  o.prompt = parseLengthDist("lognormal:512:0.5", "--prompt");
  o.output = parseLengthDist("uniform:10:20", "--output");
  o.count = 50;
  const std::string a = traceCsv(generateTrace(o));
  EXPECT_EQ(a, traceCsv(generateTrace(o)));
  o.seed = 2;
  EXPECT_NE(a, traceCsv(generateTrace(o)));
  // What is written reads back as the same requests.
  const std::vector<Request> back = parseTrace(a, "gen.csv");
  o.seed = 1;
  const std::vector<Request> gen = generateTrace(o);
  ASSERT_EQ(back.size(), gen.size());
  for (size_t i = 0; i < gen.size(); ++i) {
    EXPECT_EQ(back[i].arrivalS, gen[i].arrivalS);
    EXPECT_EQ(back[i].promptTokens, gen[i].promptTokens);
  }
}

TEST(TraceGen, PoissonGapsHaveTheRateAndLengthsTheirLaw) {
  GenOptions o;
  o.rate = 4;
  o.prompt = parseLengthDist("lognormal:300:0.8", "--prompt");
  o.output = parseLengthDist("uniform:5:15", "--output");
  o.count = 20000;
  const std::vector<Request> r = generateTrace(o);
  // Mean gap 1/rate: the mean of 19,999 exponential gaps is within 3% of
  // it (its standard error is 0.7%).
  const double meanGap = r.back().arrivalS / static_cast<double>(o.count - 1);
  EXPECT_NEAR(meanGap, 0.25, 0.25 * 0.03);
  std::vector<int64_t> prompts;
  int64_t minOut = 1 << 30, maxOut = 0;
  double outSum = 0;
  for (const Request &q : r) {
    prompts.push_back(q.promptTokens);
    minOut = std::min(minOut, q.outputTokens);
    maxOut = std::max(maxOut, q.outputTokens);
    outSum += static_cast<double>(q.outputTokens);
  }
  std::sort(prompts.begin(), prompts.end());
  EXPECT_NEAR(static_cast<double>(prompts[prompts.size() / 2]), 300, 10);
  EXPECT_EQ(minOut, 5);
  EXPECT_EQ(maxOut, 15);
  EXPECT_NEAR(outSum / static_cast<double>(o.count), 10, 0.1);
}

TEST(TraceGen, FixedArrivalsAreEvenlySpaced) {
  GenOptions o;
  o.rate = 8;
  o.arrivals = Arrivals::Fixed;
  o.prompt = parseLengthDist("fixed:64", "--prompt");
  o.output = parseLengthDist("fixed:3", "--output");
  o.count = 5;
  const std::vector<Request> r = generateTrace(o);
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_DOUBLE_EQ(r[i].arrivalS, 0.125 * static_cast<double>(i));
    EXPECT_EQ(r[i].promptTokens, 64);
    EXPECT_EQ(r[i].outputTokens, 3);
  }
}

TEST(TraceGen, BadDistributionsNameTheFlag) {
  auto err = [](const std::string &text) {
    try {
      parseLengthDist(text, "--prompt");
    } catch (const UserError &e) {
      EXPECT_EQ(e.exitCode(), ExitCode::Usage);
      return e.diagnostic().str();
    }
    return std::string("no error");
  };
  EXPECT_EQ(err("uniform:9:3"),
            "--prompt: error: MIN <= MAX, whole numbers in [1, 1048576]; "
            "expected fixed:N, uniform:MIN:MAX or lognormal:MEDIAN:SIGMA, got "
            "'uniform:9:3'");
  EXPECT_EQ(err("gamma:3"),
            "--prompt: error: unknown distribution; expected fixed:N, "
            "uniform:MIN:MAX or lognormal:MEDIAN:SIGMA, got 'gamma:3'");
}

} // namespace
} // namespace spyre::serve
