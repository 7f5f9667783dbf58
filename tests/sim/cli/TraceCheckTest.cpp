// The trace checker (tests/testlib/TraceCheck) on small hand-written traces:
// it accepts well-formed ones and names each kind of breakage.
#include "testlib/TraceCheck.h"

#include <gtest/gtest.h>

namespace spyre::test {
namespace {

/// A trace with the usual names for pid 0 / tid 0 and the given events.
std::string trace(const std::string &events) {
  return R"({"displayTimeUnit":"ns","traceEvents":[
{"ph":"M","name":"process_name","pid":0,"args":{"name":"core 0"}},
{"ph":"M","name":"process_sort_index","pid":0,"args":{"sort_index":0}},
{"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"dma.load"}})" +
         (events.empty() ? std::string() : ",\n" + events) + "\n]}";
}

void expectError(const std::string &text, const std::string &part) {
  TraceCheckResult r = checkTrace(text);
  ASSERT_FALSE(r.ok()) << "accepted:\n" << text;
  EXPECT_NE(r.errorText().find(part), std::string::npos) << r.errorText();
}

TEST(TraceCheck, AcceptsAWellFormedTrace) {
  TraceCheckResult r = checkTrace(trace(
      R"({"ph":"X","name":"ld","pid":0,"tid":0,"ts":0.000,"dur":0.002},
{"ph":"X","name":"halt","pid":0,"tid":0,"ts":0.002,"dur":0},
{"ph":"X","name":"st","pid":0,"tid":0,"ts":0.002,"dur":0.001},
{"ph":"i","s":"g","name":"lx-race","pid":0,"tid":0,"ts":0.001},
{"ph":"B","name":"b","pid":0,"tid":0,"ts":1},
{"ph":"E","pid":0,"tid":0,"ts":2},
{"ph":"s","name":"f","cat":"c","id":7,"pid":0,"tid":0,"ts":0.001},
{"ph":"t","name":"f","cat":"c","id":7,"pid":0,"tid":0,"ts":0.002},
{"ph":"f","bp":"e","name":"f","cat":"c","id":7,"pid":0,"tid":0,"ts":0.003},
{"ph":"C","name":"bytes","pid":0,"ts":0.001,"args":{"read":128}},
{"ph":"C","name":"bytes","pid":0,"ts":0.002,"args":{"read":0}})"));
  EXPECT_TRUE(r.ok()) << r.errorText();
  EXPECT_EQ(r.events, 14u);
  ASSERT_EQ(r.slices.size(), 3u);
  EXPECT_EQ(r.slices[0].durNs, 2);
  EXPECT_EQ(r.slices[2].startNs, 2);
  EXPECT_EQ(r.instants, 1u);
  EXPECT_EQ(r.flowEvents, 3u);
  EXPECT_EQ(r.counterSamples, 2u);
  EXPECT_EQ(r.processNames.at(0), "core 0");
  EXPECT_EQ((r.threadNames.at({0, 0})), "dma.load");
}

TEST(TraceCheck, AcceptsABareEventArray) {
  TraceCheckResult r = checkTrace(
      R"([{"ph":"M","name":"process_name","pid":0,"args":{"name":"chip"}},
{"ph":"i","s":"g","name":"x","pid":0,"ts":0}])");
  EXPECT_TRUE(r.ok()) << r.errorText();
}

TEST(TraceCheck, ConvertsTimesAsPerfettoDoes) {
  EXPECT_EQ(perfettoNs(0.000667), 1);
  EXPECT_EQ(perfettoNs(0.001333), 1);
  EXPECT_EQ(perfettoNs(0.0014), 1);
  EXPECT_EQ(perfettoNs(1.5), 1500);
}

TEST(TraceCheck, RejectsBrokenJsonAndTopLevel) {
  expectError("{\"traceEvents\":[", "not valid JSON");
  expectError("{\"events\":[]}", "no 'traceEvents' array");
  expectError("42", "neither an object nor an array");
  expectError(R"({"displayTimeUnit":"s","traceEvents":[]})", "displayTimeUnit");
}

TEST(TraceCheck, RejectsEventsMissingRequiredFields) {
  expectError(trace(R"({"name":"x","pid":0,"tid":0,"ts":0,"dur":1})"),
              "one-letter string 'ph'");
  expectError(trace(R"({"ph":"X","pid":0,"tid":0,"ts":0,"dur":1})"),
              "needs a string 'name'");
  expectError(trace(R"({"ph":"X","name":"x","tid":0,"ts":0,"dur":1})"),
              "needs an integer 'pid'");
  expectError(trace(R"({"ph":"X","name":"x","pid":0,"ts":0,"dur":1})"),
              "needs an integer 'tid'");
  expectError(trace(R"({"ph":"X","name":"x","pid":0,"tid":0,"dur":1})"),
              "needs a numeric 'ts'");
  expectError(
      trace(R"({"ph":"X","name":"x","pid":0,"tid":0,"ts":"0","dur":1})"),
      "needs a numeric 'ts'");
  expectError(trace(R"({"ph":"X","name":"x","pid":0,"tid":0,"ts":0})"),
              "needs a numeric 'dur'");
  expectError(
      trace(R"({"ph":"X","name":"x","pid":0,"tid":0,"ts":0,"dur":-0.001})"),
      "negative 'dur'");
  expectError(trace(R"({"ph":"Q","name":"x","pid":0,"tid":0,"ts":0})"),
              "unknown or unsupported phase 'Q'");
}

TEST(TraceCheck, RejectsOverlappingSlicesOnOneThread) {
  expectError(
      trace(R"({"ph":"X","name":"a","pid":0,"tid":0,"ts":0,"dur":0.002},
{"ph":"X","name":"b","pid":0,"tid":0,"ts":0.001,"dur":0.002})"),
      "'X' 'b' [1, 3) ns overlaps event 3 'a' [0, 2) ns on pid 0 tid 0");
  // Nesting is overlap too: our threads run one instruction at a time.
  expectError(
      trace(R"({"ph":"X","name":"outer","pid":0,"tid":0,"ts":0,"dur":0.010},
{"ph":"X","name":"inner","pid":0,"tid":0,"ts":0.002,"dur":0.001})"),
      "'inner' [2, 3) ns overlaps event 3 'outer'");
}

// Back-to-back cycles of a 1.5 GHz clock written with independently rounded
// ts and dur: in the file the second slice starts 1 ps before the first one
// ends; Perfetto rounds each to whole nanoseconds and sees [1, 2) and [1, 2).
TEST(TraceCheck, RejectsSlicesThatOverlapAfterPerfettoRounding) {
  expectError(
      trace(
          R"({"ph":"X","name":"li","pid":0,"tid":0,"ts":0.000667,"dur":0.000667},
{"ph":"X","name":"loop","pid":0,"tid":0,"ts":0.001333,"dur":0.000667})"),
      "'loop' [1, 2) ns overlaps event 3 'li' [1, 2) ns");
}

TEST(TraceCheck, AcceptsTouchingSlicesAndOtherThreads) {
  TraceCheckResult r = checkTrace(
      R"({"traceEvents":[
{"ph":"M","name":"process_name","pid":0,"args":{"name":"core 0"}},
{"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"a"}},
{"ph":"M","name":"thread_name","pid":0,"tid":1,"args":{"name":"b"}},
{"ph":"X","name":"x","pid":0,"tid":0,"ts":0,"dur":0.005},
{"ph":"X","name":"y","pid":0,"tid":1,"ts":0.001,"dur":0.005},
{"ph":"X","name":"z","pid":0,"tid":0,"ts":0.005,"dur":0},
{"ph":"X","name":"w","pid":0,"tid":0,"ts":0.005,"dur":0.001}]})");
  EXPECT_TRUE(r.ok()) << r.errorText();
}

TEST(TraceCheck, RequiresProcessAndThreadNames) {
  expectError(R"({"traceEvents":[
{"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"a"}},
{"ph":"X","name":"x","pid":0,"tid":0,"ts":0,"dur":1}]})",
              "process 0 has events but no 'process_name' metadata");
  expectError(trace(R"({"ph":"X","name":"x","pid":0,"tid":3,"ts":0,"dur":1})"),
              "thread pid 0 tid 3 has events but no 'thread_name' metadata");
  // Instants, counters and flows need names too, not only slices.
  expectError(trace(R"({"ph":"i","s":"g","name":"f","pid":5,"ts":0})"),
              "process 5 has events but no 'process_name' metadata");
  expectError(trace(R"({"ph":"C","name":"c","pid":6,"ts":0,"args":{"v":1}})"),
              "process 6 has events but no 'process_name' metadata");
  expectError(
      trace(R"({"ph":"X","name":"x","pid":0,"tid":0,"ts":0,"dur":1},
{"ph":"s","name":"f","cat":"c","id":1,"pid":0,"tid":0,"ts":0},
{"ph":"f","bp":"e","name":"f","cat":"c","id":1,"pid":0,"tid":4,"ts":0})"),
      "thread pid 0 tid 4 has events but no 'thread_name' metadata");
  expectError(
      trace(
          R"({"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"other"}})"),
      "named twice ('dma.load' and 'other')");
  expectError(
      trace(R"({"ph":"M","name":"thread_name","pid":0,"args":{"name":"a"}})"),
      "needs an integer 'tid'");
  expectError(trace(R"({"ph":"M","name":"process_name","pid":0,"args":{}})"),
              "needs a string 'args.name'");
  expectError(
      trace(
          R"({"ph":"M","name":"process_sort_index","pid":0,"args":{"sort_index":"1"}})"),
      "needs an integer 'args.sort_index'");
  expectError(trace(R"({"ph":"M","name":"process_colour","pid":0,"args":{}})"),
              "not a process/thread name or sort index");
}

TEST(TraceCheck, ChecksInstants) {
  expectError(trace(R"({"ph":"i","s":"x","name":"f","pid":0,"tid":0,"ts":0})"),
              "scope 's' other than g, p or t");
  expectError(trace(R"({"ph":"i","name":"f","pid":0,"ts":0})"),
              "needs an integer 'tid'");
  expectError(trace(R"({"ph":"i","s":"g","name":"f","pid":0})"),
              "needs a numeric 'ts'");
}

TEST(TraceCheck, ChecksBeginEndPairs) {
  expectError(trace(R"({"ph":"E","pid":0,"tid":0,"ts":1})"),
              "'E' without an open 'B'");
  expectError(trace(R"({"ph":"B","name":"b","pid":0,"tid":0,"ts":1})"),
              "never closed by an 'E'");
}

/// A trace whose thread has one slice [0, 1 us] for flows to bind to.
std::string withSlice(const std::string &events) {
  return trace(R"({"ph":"X","name":"x","pid":0,"tid":0,"ts":0,"dur":1},)" +
               events);
}

TEST(TraceCheck, ChecksFlowsAreBalanced) {
  expectError(withSlice(R"({"ph":"s","name":"f","cat":"c","id":1,"pid":0,"tid":0,"ts":0})"),
              "flow 1 does not end with an 'f' event");
  expectError(
      withSlice(R"({"ph":"f","bp":"e","name":"f","cat":"c","id":2,"pid":0,"tid":0,"ts":0})"),
      "flow 2 does not begin with an 's' event");
  expectError(withSlice(R"({"ph":"s","name":"f","cat":"c","id":3,"pid":0,"tid":0,"ts":0},
{"ph":"s","name":"f","cat":"c","id":3,"pid":0,"tid":0,"ts":0},
{"ph":"f","bp":"e","name":"f","cat":"c","id":3,"pid":0,"tid":0,"ts":1})"),
              "flow 3 has 2 's' and 1 'f' events");
  expectError(withSlice(R"({"ph":"s","name":"f","cat":"c","id":4,"pid":0,"tid":0,"ts":0.5},
{"ph":"f","bp":"e","name":"f","cat":"c","id":4,"pid":0,"tid":0,"ts":0.2})"),
              "flow 4 steps back in time");
  expectError(withSlice(R"({"ph":"s","name":"f","cat":"c","pid":0,"tid":0,"ts":0})"),
              "needs an 'id'");
}

TEST(TraceCheck, ChecksFlowCategoriesAndBinding) {
  expectError(withSlice(R"({"ph":"s","name":"f","id":1,"pid":0,"tid":0,"ts":0})"),
              "'s' 'f' needs a string 'cat'");
  expectError(withSlice(R"({"ph":"s","name":"f","cat":"sync","id":5,"pid":0,"tid":0,"ts":0},
{"ph":"f","bp":"e","name":"f","cat":"ring","id":5,"pid":0,"tid":0,"ts":0.5})"),
              "flow 5 changes 'cat' from 'sync' to 'ring'");
  expectError(withSlice(R"({"ph":"s","name":"f","cat":"c","id":6,"pid":0,"tid":0,"ts":0},
{"ph":"f","name":"f","cat":"c","id":6,"pid":0,"tid":0,"ts":0.5})"),
              "needs \"bp\":\"e\"");
  // An end outside every slice of its thread binds to nothing.
  expectError(withSlice(R"({"ph":"s","name":"f","cat":"c","id":7,"pid":0,"tid":0,"ts":0},
{"ph":"f","bp":"e","name":"f","cat":"c","id":7,"pid":0,"tid":0,"ts":2})"),
              "flow 7 'f' at 2000 ns is in no slice of pid 0 tid 0");
  TraceCheckResult ok = checkTrace(
      withSlice(R"({"ph":"s","name":"f","cat":"c","id":8,"pid":0,"tid":0,"ts":0},
{"ph":"f","bp":"e","name":"f","cat":"c","id":8,"pid":0,"tid":0,"ts":1})"));
  EXPECT_TRUE(ok.ok()) << ok.errorText();
}

TEST(TraceCheck, ChecksCounters) {
  expectError(
      trace(R"({"ph":"C","name":"c","pid":0,"ts":0,"args":{"v":"high"}})"),
      "counter 'v' is not a number");
  expectError(trace(R"({"ph":"C","name":"c","pid":0,"ts":0})"),
              "needs an 'args' object");
  expectError(trace(R"({"ph":"C","name":"c","pid":0,"ts":0,"args":{}})"),
              "has no counter value");
  // One track's samples must move forward in time; other tracks are apart.
  expectError(trace(R"({"ph":"C","name":"c","pid":0,"ts":0.002,"args":{"v":1}},
{"ph":"C","name":"d","pid":0,"ts":0.001,"args":{"v":1}},
{"ph":"C","name":"c","pid":0,"ts":0.002,"args":{"v":2}})"),
              "counter 'c' of pid 0 at 2 ns does not come after its previous "
              "sample (2 ns)");
}

} // namespace
} // namespace spyre::test
