// `spyre compare`: check a computed tensor against a reference, element by
// element, with a tolerance suited to DL16 results.
#include "Commands.h"

#include "compiler/ref/Evaluator.h"
#include "support/Diagnostic.h"
#include "support/Npy.h"
#include "support/TensorCompare.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace spyre::cli {

namespace {

struct CompareOptions {
  std::string actual;
  std::string expected;
  // DL16 keeps 10 significant bits (relative rounding error 2^-10); a result
  // that went through a few DL16 roundings and an FP32 accumulation stays
  // well within 2^-7 relative of a double-precision reference.
  double rtol = 1.0 / 128;
  double atol = 1e-3;
};

int runCompare(const CompareOptions &o) {
  NpyArray a = readNpy(o.actual), e = readNpy(o.expected);
  if (a.shape != e.shape)
    throw UserError(SourceLoc{o.actual}, "shape " + shapeText(a.shape) +
                                             " differs from " +
                                             shapeText(e.shape) + " of " +
                                             o.expected);
  const std::vector<double> av = compiler::ref::tensorFromNpy(a).values,
                            ev = compiler::ref::tensorFromNpy(e).values;
  const TensorComparison c = compareTensors(av, ev, {o.atol, o.rtol});
  std::cout << fmt::format("{} elements, max |difference| {:.6g}, tolerance "
                           "{:.3g} + {:.3g} * |expected|\n",
                           c.elements, c.maxAbsDiff, o.atol, o.rtol);
  if (c.ok()) {
    std::cout << "match\n";
    return static_cast<int>(ExitCode::Ok);
  }
  std::cout << fmt::format("MISMATCH: {} of {} elements outside the tolerance; "
                           "worst at {}: {:.8g}, expected {:.8g}\n",
                           c.outside, c.elements, flatIndexText(a.shape, c.worst),
                           av[c.worst], ev[c.worst]);
  return static_cast<int>(ExitCode::VerifyFailed);
}

} // namespace

void addCompareCommand(CLI::App &app, Dispatch &dispatch) {
  auto opts = std::make_shared<CompareOptions>();
  CLI::App *cmd = app.add_subcommand(
      "compare", "Compare a computed .npy tensor with a reference (exit 3 "
                 "when an element is outside the tolerance)");
  cmd->add_option("actual", opts->actual, "Computed tensor (.npy)")->required();
  cmd->add_option("expected", opts->expected, "Reference tensor (.npy)")->required();
  cmd->footer("An element matches when |actual - expected| <= atol + rtol * "
              "|expected|. An infinity matches only the same infinity and a "
              "NaN only a NaN, whatever the tolerance.");
  const CLI::Validator tolerance(
      [](const std::string &text) {
        double v = 0;
        return CLI::detail::lexical_cast(text, v) ? toleranceProblem(v)
                                                  : std::string();
      },
      "FINITE >= 0");
  cmd->add_option("--rtol", opts->rtol, "Relative tolerance (default 1/128)")
      ->check(tolerance);
  cmd->add_option("--atol", opts->atol, "Absolute tolerance (default 1e-3)")
      ->check(tolerance);
  cmd->callback([opts, &dispatch] {
    dispatch.run = [opts] { return runCompare(*opts); };
  });
}

} // namespace spyre::cli
