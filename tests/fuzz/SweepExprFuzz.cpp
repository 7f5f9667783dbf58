// Fuzz target `sweep_expr`: the expression language of sweep constraints
// and report costs (sweep/Expr.h) on arbitrary text. An expression it
// accepts must be within the length limit, list each name once at an offset
// where the text spells it, and evaluate to the same value twice (NaN
// included), with every name it lists looked up once per evaluation.
#include "FuzzTarget.h"

#include "support/Diagnostic.h"
#include "sweep/Expr.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using namespace spyre;

namespace {

/// A value for `name` that depends on its text only: names differ in value.
double valueOf(const std::string &name) {
  double v = 0;
  for (char c : name)
    v = v * 31 + static_cast<unsigned char>(c);
  return std::fmod(v, 1000.0) - 500.0;
}

bool sameValue(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) ||
         std::memcmp(&a, &b, sizeof a) == 0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view text = fuzz::asText(data, size);
  std::optional<sweep::Expr> expr;
  try {
    expr.emplace(sweep::Expr::parse(text, SourceLoc{"fuzz", 1, 1}));
  } catch (const UserError &) {
    return 0;
  }
  SPYRE_ASSERT(text.size() <= sweep::Expr::kMaxLength,
               "an expression longer than the limit was accepted");
  const std::vector<std::string> &names = expr->names();
  for (size_t i = 0; i < names.size(); ++i) {
    SPYRE_ASSERT(text.substr(expr->nameOffset(i), names[i].size()) == names[i],
                 "name '" + names[i] + "' is not at its offset");
    for (size_t k = 0; k < i; ++k)
      SPYRE_ASSERT(names[k] != names[i], "name '" + names[i] + "' listed twice");
  }
  size_t lookups = 0;
  auto lookup = [&](const std::string &name) {
    ++lookups;
    return valueOf(name);
  };
  const double first = expr->eval(lookup);
  SPYRE_ASSERT(lookups == names.size(), "a name looked up more than once");
  const double second = expr->eval(lookup);
  SPYRE_ASSERT(sameValue(first, second),
               "an expression evaluates to two values: " +
                   std::to_string(first) + " and " + std::to_string(second));
  return 0;
}
