// More LX is never slower: the GPT-2-small decoder layer
// (examples/models/gpt2_layer, the model of
// examples/sweeps/gpt2_layer_lx_cores_bw.yaml) compiled at -O2 and
// simulated at every LX size of that sweep, on 8 and on 32 cores, takes
// no more cycles with each larger LX. Every plan that fits a smaller LX
// fits the larger one too, so a planner whose estimates rank its
// candidates as the simulation does cannot get slower (docs/sweep.md).
// Where the planner's estimate still ranks two plans the wrong way round,
// the step is listed below with the reason; a listed step that is no
// longer slower fails the test, so the list only shrinks.
#include "compiler/import/ModelLoader.h"
#include "run/RunModel.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

namespace spyre::compiler {
namespace {

/// Steps to a larger LX that are still slower: the cores, the larger LX,
/// and why.
struct KnownSlower {
  int cores;
  int64_t lxBytes;
  const char *why;
};
const KnownSlower kKnownSlower[] = {
    {8, 2097152,
     "mlp.fc (256 x 768 x 3072) takes a 1x8 grid of one 256 x 64 x 384 "
     "tile per core without A sharing, which only fits 2 MiB, estimated 3% "
     "faster than the 1x8 sharing plan with a kept panel (104.9k against "
     "108.6k) and simulated 6% slower (101.9k against 95.8k; the sharing "
     "plan's estimate is 13% above its simulation, most of it its loads' "
     "memory latency counted on top of a channel the eight cores keep "
     "busy): the layer is 0.9% slower"},
};

uint64_t cyclesAt(const Graph &graph, int cores, int64_t lxBytes) {
  run::RunOptions o;
  o.model = "gpt2_layer";
  o.graph = &graph;
  o.timingOnly = true;
  o.useSystemC = false;
  o.records = false;
  o.configSettings = {"chip.cores=" + std::to_string(cores),
                      "lx.size_bytes=" + std::to_string(lxBytes)};
  return run::runModel(o).cycles;
}

TEST(LxMonotonic, Gpt2LayerNeverSlowerWithMoreLx) {
  DiagnosticEngine diags;
  std::optional<Graph> g = loadModel(
      test::srcPath("examples/models/gpt2_layer/model.json"), {}, diags);
  ASSERT_TRUE(g.has_value()) << diags.str();
  for (int cores : {8, 16, 32}) {
    uint64_t before = 0;
    int64_t lxBefore = 0;
    for (int64_t lx : {524288, 1048576, 2097152, 4194304}) {
      const uint64_t cycles = cyclesAt(*g, cores, lx);
      const KnownSlower *known = nullptr;
      for (const KnownSlower &k : kKnownSlower)
        if (k.cores == cores && k.lxBytes == lx)
          known = &k;
      if (lxBefore > 0 && known) {
        EXPECT_GT(cycles, before)
            << cores << " cores: LX " << lx << " bytes is no longer slower "
            << "than " << lxBefore << ": remove it from kKnownSlower";
      } else if (lxBefore > 0) {
        EXPECT_LE(cycles, before)
            << cores << " cores: LX " << lx << " bytes takes " << cycles
            << " cycles, " << lxBefore << " bytes " << before;
      }
      before = cycles;
      lxBefore = lx;
    }
  }
}

} // namespace
} // namespace spyre::compiler
