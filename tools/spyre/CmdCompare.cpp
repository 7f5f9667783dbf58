// `spyre compare`: check a computed tensor against a reference, element by
// element, with a tolerance suited to DL16 results.
#include "Commands.h"

#include "compiler/ref/Evaluator.h"
#include "support/Diagnostic.h"
#include "support/Npy.h"

#include <fmt/format.h>

#include <cmath>
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


std::string indexText(const std::vector<int64_t> &shape, size_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = static_cast<int64_t>(flat) % shape[d];
    flat /= static_cast<size_t>(shape[d]);
  }
  return shapeText(idx);
}

int runCompare(const CompareOptions &o) {
  NpyArray a = readNpy(o.actual), e = readNpy(o.expected);
  if (a.shape != e.shape)
    throw UserError(SourceLoc{o.actual}, "shape " + shapeText(a.shape) +
                                             " differs from " +
                                             shapeText(e.shape) + " of " +
                                             o.expected);
  const std::vector<double> av = compiler::ref::tensorFromNpy(a).values,
                            ev = compiler::ref::tensorFromNpy(e).values;
  size_t worst = 0, bad = 0;
  double worstExcess = -1, maxAbs = 0;
  for (size_t i = 0; i < av.size(); ++i) {
    double diff = std::fabs(av[i] - ev[i]);
    bool nanMismatch = std::isnan(av[i]) != std::isnan(ev[i]);
    double allowed = o.atol + o.rtol * std::fabs(ev[i]);
    double excess = nanMismatch ? INFINITY : diff - allowed;
    if (!std::isnan(diff))
      maxAbs = std::max(maxAbs, diff);
    if (excess > 0 || nanMismatch)
      ++bad;
    if (excess > worstExcess || (nanMismatch && worstExcess != INFINITY)) {
      worstExcess = excess;
      worst = i;
    }
  }
  std::cout << fmt::format("{} elements, max |difference| {:.6g}, tolerance "
                           "{:.3g} + {:.3g} * |expected|\n",
                           av.size(), maxAbs, o.atol, o.rtol);
  if (bad == 0) {
    std::cout << "match\n";
    return static_cast<int>(ExitCode::Ok);
  }
  std::cout << fmt::format("MISMATCH: {} of {} elements outside the tolerance; "
                           "worst at {}: {:.8g}, expected {:.8g}\n",
                           bad, av.size(), indexText(a.shape, worst), av[worst],
                           ev[worst]);
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
  cmd->add_option("--rtol", opts->rtol, "Relative tolerance (default 1/128)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--atol", opts->atol, "Absolute tolerance (default 1e-3)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([opts, &dispatch] {
    dispatch.run = [opts] { return runCompare(*opts); };
  });
}

} // namespace spyre::cli
