// The pass manager: passes run in order, the verifier and the postcondition
// after each one catch a broken pass (named, with the IR it left), user
// errors and exceptions stop the pipeline, stop-after and print-ir-before /
// print-ir-after, statistics and timing reports, typed options.
#include "PassTestUtil.h"

#include "compiler/ir/Printer.h"
#include "compiler/pipeline/PassRegistry.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

namespace spyre::compiler::test {
namespace {

const char *kSmall = R"(graph @g {
  input %x : f32[3, 100]
  %y = relu @r(%x) : f32[3, 100]
  return %y
})";

/// A pass that does `body` and declares one statistic.
PassInfo testPass(std::string_view name, PassRunFn body,
                  PostconditionFn post = nullptr) {
  return PassInfo{name,
                  "A pass of the tests",
                  "whatever the test says",
                  {},
                  {{"touched", "times the pass ran"}},
                  std::move(body),
                  std::move(post)};
}

PassResult succeed(Graph &, PassContext &context) {
  context.addStatistic("touched");
  return PassResult::Success;
}

struct RunOutcome {
  PipelineStatus status;
  std::string diags;
  std::vector<PassRunRecord> records;
  std::string stoppedAt;
};

RunOutcome runWith(Graph &g, const std::vector<const PassInfo *> &passes,
                   PassManagerOptions options = {}) {
  PassManager pm(hw::builtinConfig(), std::move(options));
  for (const PassInfo *p : passes)
    pm.addPass(*p);
  DiagnosticEngine diags;
  PipelineStatus status = pm.run(g, diags);
  return {status, diags.str(), pm.records(), pm.stoppedAt()};
}

TEST(PassManager, RunsPassesInOrderAndCountsTheirStatistics) {
  std::unique_ptr<Graph> g = parseIr(kSmall);
  std::vector<std::string> order;
  PassInfo first = testPass("first", [&](Graph &, PassContext &c) {
    order.push_back("first");
    c.addStatistic("touched", 2);
    return PassResult::Success;
  });
  PassInfo second = testPass("second", [&](Graph &, PassContext &c) {
    order.push_back("second");
    c.addStatistic("touched");
    return PassResult::Success;
  });
  PassManager pm(hw::builtinConfig());
  pm.addPass(first);
  pm.addPass(second);
  DiagnosticEngine diags;
  ASSERT_EQ(pm.run(*g, diags), PipelineStatus::Success) << diags.str();
  EXPECT_EQ(order, (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(pm.statisticsReport(), "first\n"
                                   "  touched  2  times the pass ran\n"
                                   "second\n"
                                   "  touched  1  times the pass ran\n");
  std::string timing = pm.timingReport();
  EXPECT_NE(timing.find(" ms  first\n"), std::string::npos) << timing;
  EXPECT_NE(timing.find(" ms  second\n"), std::string::npos) << timing;
  EXPECT_NE(timing.find(" ms  total\n"), std::string::npos) << timing;
  EXPECT_TRUE(pm.stoppedAt().empty());
}

TEST(PassManager, PassThatBreaksTheIrIsAnInternalErrorNamingIt) {
  std::unique_ptr<Graph> g = parseIr(kSmall);
  PassInfo breaker = testPass("break-types", [](Graph &graph, PassContext &) {
    graph.findValue("y")->setType({ElementType::F32, {1}});
    return PassResult::Success;
  });
  PassInfo after = testPass("after", succeed);
  RunOutcome r = runWith(*g, {&breaker, &after});
  EXPECT_EQ(r.status, PipelineStatus::InternalError);
  EXPECT_EQ(r.stoppedAt, "break-types");
  ASSERT_EQ(r.records.size(), 1u)
      << "the pipeline must stop at the broken pass";
  EXPECT_EQ(r.diags, "test.ir: error: internal error in pass 'break-types': "
                     "the IR it produced "
                     "does not verify\n"
                     "test.ir:3:3: error: op 'r' (relu): result 0 %y has type "
                     "f32[1], but relu "
                     "gives f32[3, 100]\n"
                     "test.ir: note: the IR after pass 'break-types':\n"
                     "graph @g {\n"
                     "  input %x : f32[3, 100]\n"
                     "  %y = relu @r(%x) : f32[1]\n"
                     "  return %y\n"
                     "}\n\n");
}

TEST(PassManager, FailedPostconditionIsAnInternalError) {
  std::unique_ptr<Graph> g = parseIr(kSmall);
  PassInfo pass = testPass(
      "promise", succeed,
      [](const Graph &graph, const PassContext &, DiagnosticEngine &d) {
        d.error(SourceLoc{"<graph " + graph.name() + ">"},
                "the promise is not kept");
        return false;
      });
  RunOutcome r = runWith(*g, {&pass});
  EXPECT_EQ(r.status, PipelineStatus::InternalError);
  EXPECT_NE(
      r.diags.find(
          "error: internal error in pass 'promise': its postcondition does "
          "not hold\n<graph g>: error: the promise is not kept\n"),
      std::string::npos)
      << r.diags;
  EXPECT_NE(r.diags.find("note: the IR after pass 'promise':\ngraph @g {"),
            std::string::npos);
}

TEST(PassManager, PostconditionRunsOnlyAfterTheVerifierPassed) {
  std::unique_ptr<Graph> g = parseIr(kSmall);
  bool postconditionRan = false;
  PassInfo pass = testPass(
      "break-types",
      [](Graph &graph, PassContext &) {
        graph.findValue("y")->setType({ElementType::F32, {1}});
        return PassResult::Success;
      },
      [&](const Graph &, const PassContext &, DiagnosticEngine &) {
        postconditionRan = true;
        return true;
      });
  EXPECT_EQ(runWith(*g, {&pass}).status, PipelineStatus::InternalError);
  EXPECT_FALSE(postconditionRan);
}

TEST(PassManager, UserErrorStopsThePipelineWithItsDiagnostic) {
  std::unique_ptr<Graph> g = parseIr(kSmall);
  PassInfo refuse = testPass("refuse", [](Graph &graph, PassContext &c) {
    return c.opError(graph, *graph.findOp("r"), "rows of 3 are not supported");
  });
  PassInfo after = testPass("after", succeed);
  RunOutcome r = runWith(*g, {&refuse, &after});
  EXPECT_EQ(r.status, PipelineStatus::Failure);
  EXPECT_EQ(r.diags,
            "test.ir:3:3: error: op 'r' (relu): rows of 3 are not supported\n");
  EXPECT_EQ(r.stoppedAt, "refuse");
  EXPECT_EQ(r.records.size(), 1u);
}

TEST(PassManager, ExceptionsDoNotCrossThePassBoundary) {
  std::unique_ptr<Graph> g = parseIr(kSmall);
  PassInfo user =
      testPass("throws-user-error", [](Graph &, PassContext &) -> PassResult {
        throw UserError(SourceLoc{"weights.npy"}, "truncated file");
      });
  RunOutcome r = runWith(*g, {&user});
  EXPECT_EQ(r.status, PipelineStatus::Failure);
  EXPECT_EQ(r.diags, "weights.npy: error: truncated file\n");

  PassInfo bug = testPass("throws", [](Graph &, PassContext &) -> PassResult {
    throw std::runtime_error("boom");
  });
  r = runWith(*g, {&bug});
  EXPECT_EQ(r.status, PipelineStatus::InternalError);
  EXPECT_EQ(
      r.diags.substr(0, r.diags.find('\n')),
      "test.ir: error: internal error in pass 'throws': it threw: boom");
}

TEST(PassManager, FailureMustComeWithADiagnosticAndSuccessWithout) {
  std::unique_ptr<Graph> g = parseIr(kSmall);
  PassInfo silent = testPass(
      "silent", [](Graph &, PassContext &) { return PassResult::Failure; });
  RunOutcome r = runWith(*g, {&silent});
  EXPECT_EQ(r.status, PipelineStatus::InternalError);
  EXPECT_EQ(
      r.diags.substr(0, r.diags.find('\n')),
      "test.ir: error: internal error in pass 'silent': it failed without "
      "reporting an error");

  PassInfo mixed = testPass("mixed", [](Graph &graph, PassContext &c) {
    (void)c.opError(graph, *graph.findOp("r"), "something");
    return PassResult::Success;
  });
  r = runWith(*g, {&mixed});
  EXPECT_EQ(r.status, PipelineStatus::InternalError);
  EXPECT_NE(
      r.diags.find(
          "internal error in pass 'mixed': it reported errors but returned "
          "success"),
      std::string::npos);
}

TEST(PassManager, InputThatDoesNotVerifyRunsNoPass) {
  std::unique_ptr<Graph> g = parseIr(kSmall);
  g->findValue("y")->setType({ElementType::F32, {1}});
  bool ran = false;
  PassInfo pass = testPass("p", [&](Graph &, PassContext &) {
    ran = true;
    return PassResult::Success;
  });
  RunOutcome r = runWith(*g, {&pass});
  EXPECT_EQ(r.status, PipelineStatus::Failure);
  EXPECT_FALSE(ran);
  EXPECT_NE(
      r.diags.find(
          "test.ir: error: the input graph does not verify; no pass ran"),
      std::string::npos)
      << r.diags;
}

TEST(PassManager, StopAfterRunsThePipelineUpToThatPass) {
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %x : f32[2, 3]
  const %w : f32[4, 3] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  %y = linear @fc(%x, %w) : f32[2, 4]
  return %y
})");
  PassManagerOptions options;
  options.stopAfter = "canonicalize";
  PassManager pm(hw::builtinConfig(), options);
  pm.addPipeline(o0Pipeline());
  DiagnosticEngine diags;
  ASSERT_EQ(pm.run(*g, diags), PipelineStatus::Success) << diags.str();
  EXPECT_EQ(pm.stoppedAt(), "canonicalize");
  ASSERT_EQ(pm.records().size(), 1u);
  EXPECT_EQ(g->findOp("fc")->kind(), OpKind::Matmul);
  EXPECT_FALSE(g->findValue("y")->annotations().contains("layout"));
}

TEST(PassManager, PrintsIrBeforeAndAfterTheNamedPasses) {
  std::unique_ptr<Graph> g = parseIr(R"(graph @g {
  input %x : f32[3]
  %a = neg @a(%x) : f32[3]
  %b = neg @b(%a) : f32[3]
  %y = relu @r(%b) : f32[3]
  return %y
})");
  std::ostringstream ir;
  PassManagerOptions options;
  options.printIrBefore = {"canonicalize"};
  options.printIrAfter = {"all"};
  options.irStream = &ir;
  PassManager pm(hw::builtinConfig(), options);
  DiagnosticEngine diags;
  std::optional<Pipeline> p =
      parsePipeline("canonicalize,layout{default-dtype=f32}", diags);
  ASSERT_TRUE(p) << diags.str();
  pm.addPipeline(*p);
  ASSERT_EQ(pm.run(*g, diags), PipelineStatus::Success) << diags.str();
  const std::string f32 = "#{layout = {device_shape = [1, 32], dim_map = [0, "
                          "0], dtype = \"f32\", stick_dim = 0}}";
  EXPECT_EQ(ir.str(), "// IR before canonicalize\n"
                      "graph @g {\n"
                      "  input %x : f32[3]\n"
                      "  %a = neg @a(%x) : f32[3]\n"
                      "  %b = neg @b(%a) : f32[3]\n"
                      "  %y = relu @r(%b) : f32[3]\n"
                      "  return %y\n"
                      "}\n"
                      "// IR after canonicalize\n"
                      "graph @g {\n"
                      "  input %x : f32[3]\n"
                      "  %y = relu @r(%x) : f32[3]\n"
                      "  return %y\n"
                      "}\n"
                      "// IR after layout{default-dtype=f32}\n"
                      "graph @g {\n"
                      "  input %x : f32[3] " +
                          f32 +
                          "\n"
                          "  %y = relu @r(%x) : f32[3] " +
                          f32 +
                          "\n"
                          "  return %y\n"
                          "}\n");
}

TEST(PassManager, NamesThatAreNotPassesOfThePipelineAreUsageErrors) {
  std::unique_ptr<Graph> g = parseIr(kSmall);
  std::ostringstream ir;
  PassManagerOptions options;
  options.printIrAfter = {"layot"};
  options.stopAfter = "all";
  options.irStream = &ir;
  PassManager pm(hw::builtinConfig(), options);
  pm.addPipeline(o0Pipeline());
  DiagnosticEngine diags;
  EXPECT_EQ(pm.run(*g, diags), PipelineStatus::Failure);
  EXPECT_EQ(diags.str(),
            "print-ir-after: error: 'layot' is not a pass of the pipeline "
            "(canonicalize, append-outputs, layout, divide, schedule, lx-plan, "
            "tile, emit)\n"
            "stop-after: error: 'all' is not a pass of the pipeline "
            "(canonicalize, append-outputs, layout, divide, schedule, lx-plan, "
            "tile, emit)\n");
  EXPECT_TRUE(pm.records().empty());
  EXPECT_EQ(ir.str(), "");
}

TEST(PassManager, CountingAnUndeclaredStatisticIsABug) {
  std::unique_ptr<Graph> g = parseIr(kSmall);
  PassInfo pass = testPass("miscounts", [](Graph &, PassContext &c) {
    c.addStatistic("not-declared");
    return PassResult::Success;
  });
  EXPECT_DEATH(runWith(*g, {&pass}),
               "counts undeclared statistic 'not-declared'");
}

PassInfo optionPass() {
  return PassInfo{
      "options",
      "Has one option of each type",
      "nothing",
      {
          {"flag", OptionType::Bool, "false", "a bool", {}, nullptr},
          {"count", OptionType::Int, "4", "an int", {}, nullptr},
          {"label", OptionType::String, "none", "a string", {}, nullptr},
          {"mode",
           OptionType::Enum,
           "fast",
           "an enum",
           {"fast", "exact"},
           nullptr},
          {"names", OptionType::List, "a,b", "a list", {}, nullptr},
      },
      {},
      succeed,
      nullptr};
}

TEST(PassOptions, DefaultsAndValuesFromAMap) {
  PassInfo pass = optionPass();
  PassOptions defaults(pass);
  EXPECT_FALSE(defaults.getBool("flag"));
  EXPECT_EQ(defaults.getInt("count"), 4);
  EXPECT_EQ(defaults.getString("label"), "none");
  EXPECT_EQ(defaults.getString("mode"), "fast");
  EXPECT_EQ(defaults.getList("names"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(invocationText(pass, defaults), "options");

  DiagnosticEngine diags;
  std::optional<PassOptions> set =
      parsePassOptions(pass,
                       {{"flag", "true"},
                        {"count", "-12"},
                        {"label", "x y"},
                        {"mode", "exact"},
                        {"names", ""}},
                       SourceLoc{"pipeline.yaml", 3, 5}, diags);
  ASSERT_TRUE(set) << diags.str();
  EXPECT_TRUE(set->getBool("flag"));
  EXPECT_EQ(set->getInt("count"), -12);
  EXPECT_EQ(set->getString("label"), "x y");
  EXPECT_EQ(set->getString("mode"), "exact");
  EXPECT_TRUE(set->getList("names").empty());
  EXPECT_EQ(invocationText(pass, *set),
            "options{flag=true count=-12 label=x y mode=exact names=}");
}

TEST(PassOptions, BadValuesAndUnknownKeysAreLocatedErrors) {
  PassInfo pass = optionPass();
  DiagnosticEngine diags;
  EXPECT_FALSE(parsePassOptions(pass,
                                {{"flag", "yes"},
                                 {"count", "4.5"},
                                 {"mode", "slow"},
                                 {"names", "a,,b"},
                                 {"colour", "red"}},
                                SourceLoc{"pipeline.yaml", 3, 5}, diags));
  EXPECT_EQ(
      diags.str(),
      "pipeline.yaml:3:5: error: pass 'options' has no option 'colour' (it "
      "takes flag, "
      "count, label, mode, names)\n"
      "pipeline.yaml:3:5: error: option 'count' of pass 'options': expected an "
      "integer, got '4.5'\n"
      "pipeline.yaml:3:5: error: option 'flag' of pass 'options': expected "
      "'true' or "
      "'false', got 'yes'\n"
      "pipeline.yaml:3:5: error: option 'mode' of pass 'options': expected "
      "'fast' or "
      "'exact', got 'slow'\n"
      "pipeline.yaml:3:5: error: option 'names' of pass 'options': empty "
      "element in "
      "list 'a,,b'\n");
}

TEST(PassRegistry, ListsEveryPassOnceAndBuildsTheDefaultPipelines) {
  EXPECT_EQ(registeredPassNames(),
            "canonicalize, append-outputs, fuse-gated-matmul, layout, "
            "apply-mapping, "
            "divide, schedule, lx-plan, tile, emit");
  for (const PassInfo *p : passRegistry())
    EXPECT_EQ(findPass(p->name), p);
  EXPECT_EQ(findPass("nope"), nullptr);
  EXPECT_EQ(pipelineText(o0Pipeline()),
            "canonicalize,append-outputs,layout,divide{strategy=all-cores "
            "fuse-bias=false "
            "fuse-elementwise=false},schedule{overlap=false},lx-plan,tile,"
            "emit");
  EXPECT_EQ(pipelineText(levelPipeline(1)),
            "canonicalize,append-outputs,fuse-gated-matmul,layout,divide,"
            "schedule{overlap="
            "false},lx-plan,tile,emit");
  EXPECT_EQ(pipelineText(o2Pipeline()),
            "canonicalize,append-outputs,fuse-gated-matmul,layout,divide,"
            "schedule,lx-plan,"
            "tile,emit");
  // A replay puts the file's decisions on the ops before division.
  EXPECT_EQ(pipelineText(levelPipeline(2, "m.json")),
            "canonicalize,append-outputs,fuse-gated-matmul,layout,apply-"
            "mapping{file=m.json},"
            "divide,schedule,lx-plan,tile,emit");
  for (int level = 0; level <= 2; ++level) {
    ASSERT_TRUE(defaultPipeline(level).has_value());
    EXPECT_EQ(pipelineText(*defaultPipeline(level)),
              pipelineText(levelPipeline(level)));
    EXPECT_EQ(programPipelineProblem(levelPipeline(level)), "");
  }
  EXPECT_FALSE(defaultPipeline(3).has_value());
}

TEST(PassRegistry, AProgramPipelineEndsWithEmitAfterWhatItNeeds) {
  DiagnosticEngine diags;
  std::optional<Pipeline> noEmit =
      parsePipeline("canonicalize,layout,divide,schedule,lx-plan,tile", diags);
  ASSERT_TRUE(noEmit) << diags.str();
  EXPECT_NE(programPipelineProblem(*noEmit).find("must end with emit"),
            std::string::npos);
  std::optional<Pipeline> gap =
      parsePipeline("canonicalize,layout,divide,schedule,tile,emit", diags);
  ASSERT_TRUE(gap) << diags.str();
  EXPECT_EQ(programPipelineProblem(*gap),
            "pass 'emit' needs layout, divide, schedule, lx-plan and tile "
            "before it, in that order; 'lx-plan' is missing");
  // The pass manager refuses such a pipeline before running anything.
  std::unique_ptr<Graph> g = parseIr(kSmall);
  PassManager pm(hw::builtinConfig());
  pm.addPipeline(*gap);
  DiagnosticEngine runDiags;
  EXPECT_EQ(pm.run(*g, runDiags), PipelineStatus::Failure);
  EXPECT_NE(runDiags.str().find("<pipeline>: error: pass 'emit' needs"),
            std::string::npos)
      << runDiags.str();
  EXPECT_TRUE(pm.records().empty());
}

} // namespace
} // namespace spyre::compiler::test
