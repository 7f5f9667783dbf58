// One point of a serve sweep in this process (runPoint dispatches here):
// `spyre serve` on the point's effective config and serving knobs, with the
// step costs kept in DIR/step-costs/ so that the points sharing a model and
// hardware simulate each step shape once (docs/sweep.md, "Serve sweeps").
#pragma once

#include "sweep/Results.h"
#include "sweep/Sweep.h"

#include <string>

namespace spyre::sweep {

/// DIR/step-costs/: one file per simulated step shape, keyed by the model,
/// the config fingerprint, the -O level, the simulated layers and the shape.
std::string stepCostDir(const SweepPlan &plan);

/// Runs serve point `p` (its config.yaml already written) and records its
/// figures in `r`; a bad input is a UserError, which the caller records as
/// the point's failure. Says on `note` how many step shapes came from the
/// cache.
void runServePoint(const SweepPlan &plan, const SweepPoint &p, PointResult &r,
                   std::string &note);

} // namespace spyre::sweep
