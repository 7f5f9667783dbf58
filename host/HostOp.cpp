// The host ops (HostOp.h): one row per ONNX op type with its attribute
// names, its shape inference and its computation. Semantics follow the ONNX
// operator specification (onnx/docs/Operators.md, opsets 13 to 17); the
// ONNX backend node tests check them (tests/host/HostNodeTest.cpp).
#include "host/HostOp.h"

#include "support/CheckedMath.h"

#include "support/Diagnostic.h"
#include "support/Nesting.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

namespace spyre::host {

namespace {

/// Thrown by attribute readers and inference; caught in inferHostOp.
struct Invalid {
  std::string message;
};

[[noreturn]] void invalid(std::string message) {
  throw Invalid{std::move(message)};
}

std::string shapeText(const HostShape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

uint64_t countOf(const HostShape &s) {
  uint64_t n = 1;
  for (int64_t d : s)
    n *= static_cast<uint64_t>(d);
  return n;
}

std::vector<int64_t> stridesOf(const HostShape &s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;)
    st[i - 1] = st[i] * s[i];
  return st;
}

/// Calls f(outIndex, multiIndex) for every element of `shape`, row-major.
template <typename F> void forEachIndex(const HostShape &shape, F f) {
  const uint64_t n = countOf(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (uint64_t k = 0; k < n; ++k) {
    f(k, idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

/// Largest element count and rank the host accepts (the IR's own limits
/// are tighter; these keep hand-written descriptors from exhausting memory).
constexpr uint64_t kMaxElements = uint64_t{1} << 31;
constexpr size_t kMaxRank = 8;

void checkResult(const HostShape &s) {
  if (s.size() > kMaxRank)
    invalid("the result " + shapeText(s) + " has more than 8 dimensions");
  uint64_t n = 1;
  for (int64_t d : s) {
    if (d < 0)
      invalid("the result " + shapeText(s) + " has a negative dimension");
    if (d > 0 && n > kMaxElements / static_cast<uint64_t>(d))
      invalid("the result " + shapeText(s) + " is too large");
    n *= static_cast<uint64_t>(std::max<int64_t>(d, 1));
  }
}

// ---- Attributes ----

/// Typed reads of the attribute object; every problem names the attribute.
class Attrs {
public:
  explicit Attrs(const nlohmann::json &j) : j_(j) {}

  bool has(const char *name) const { return j_.contains(name); }

  int64_t i(const char *name, int64_t fallback) const {
    if (!has(name))
      return fallback;
    const nlohmann::json &v = j_.at(name);
    if (!v.is_number_integer())
      invalid("attribute '" + std::string(name) + "' must be an integer");
    return v.get<int64_t>();
  }

  double f(const char *name, double fallback) const {
    if (!has(name))
      return fallback;
    const nlohmann::json &v = j_.at(name);
    if (!v.is_number())
      invalid("attribute '" + std::string(name) + "' must be a number");
    return v.get<double>();
  }

  std::string s(const char *name, const std::string &fallback) const {
    if (!has(name))
      return fallback;
    const nlohmann::json &v = j_.at(name);
    if (!v.is_string())
      invalid("attribute '" + std::string(name) + "' must be a string");
    return v.get<std::string>();
  }

  std::optional<std::vector<int64_t>> ints(const char *name) const {
    if (!has(name))
      return std::nullopt;
    const nlohmann::json &v = j_.at(name);
    if (!v.is_array())
      invalid("attribute '" + std::string(name) +
              "' must be a list of integers");
    std::vector<int64_t> out;
    for (const nlohmann::json &e : v) {
      if (!e.is_number_integer())
        invalid("attribute '" + std::string(name) +
                "' must be a list of integers");
      out.push_back(e.get<int64_t>());
    }
    return out;
  }

  std::vector<int64_t> requiredInts(const char *name) const {
    std::optional<std::vector<int64_t>> v = ints(name);
    if (!v)
      invalid("attribute '" + std::string(name) + "' is required");
    return *v;
  }

private:
  const nlohmann::json &j_;
};

int64_t normAxis(int64_t axis, size_t rank, const char *what) {
  auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    invalid(std::string(what) + " " + std::to_string(axis) +
            " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

HostShape broadcast(const HostShape &a, const HostShape &b) {
  const size_t rank = std::max(a.size(), b.size());
  HostShape out(rank, 1);
  for (size_t k = 0; k < rank; ++k) {
    int64_t x = k + a.size() >= rank ? a[k + a.size() - rank] : 1;
    int64_t y = k + b.size() >= rank ? b[k + b.size() - rank] : 1;
    if (x != y && x != 1 && y != 1)
      invalid("shapes " + shapeText(a) + " and " + shapeText(b) +
              " do not broadcast");
    out[k] = x == 1 ? y : x;
  }
  return out;
}

/// Element of `t` read at output index `idx` of a broadcast result.
double broadcastAt(const HostTensor &t, const std::vector<int64_t> &idx,
                   const std::vector<int64_t> &strides) {
  const size_t off = idx.size() - t.shape.size();
  int64_t at = 0;
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] != 1)
      at += idx[d + off] * strides[d];
  return t.data[static_cast<size_t>(at)];
}

// ---- The op table ----

using InferFn = HostInference (*)(const HostOp &, const Attrs &,
                                  std::span<const HostShape>);
using RunFn = std::vector<HostTensor> (*)(const HostOp &, const Attrs &,
                                          std::span<const HostTensor>);

struct Row {
  std::string_view opType;
  std::vector<std::string_view> attrs;
  /// Inputs: exact count, or at least minInputs when variadic.
  size_t minInputs = 1;
  bool variadic = false;
  InferFn infer;
  RunFn run;
};

// ---- Elementwise unary ----

double unaryValue(const std::string &type, const Attrs &a, double x) {
  if (std::isnan(x))
    return x;
  if (type == "Log")
    return std::log(x);
  if (type == "Sin")
    return std::sin(x);
  if (type == "Cos")
    return std::cos(x);
  if (type == "Tan")
    return std::tan(x);
  if (type == "Atan")
    return std::atan(x);
  if (type == "Asin")
    return std::asin(x);
  if (type == "Acos")
    return std::acos(x);
  if (type == "Sinh")
    return std::sinh(x);
  if (type == "Cosh")
    return std::cosh(x);
  if (type == "Floor")
    return std::floor(x);
  if (type == "Ceil")
    return std::ceil(x);
  if (type == "Round")
    return std::nearbyint(x); // halves to even, as ONNX says
  if (type == "Sign")
    return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
  if (type == "LeakyRelu")
    return x >= 0 ? x : a.f("alpha", 0.01) * x;
  if (type == "Elu")
    return x >= 0 ? x : a.f("alpha", 1.0) * std::expm1(x);
  if (type == "Selu") {
    const double alpha = a.f("alpha", 1.67326319217681884765625);
    const double gamma = a.f("gamma", 1.05070102214813232421875);
    return gamma * (x > 0 ? x : alpha * std::expm1(x));
  }
  if (type == "HardSigmoid")
    return std::clamp(a.f("alpha", 0.2) * x + a.f("beta", 0.5), 0.0, 1.0);
  if (type == "HardSwish")
    return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0);
  if (type == "Softplus")
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  if (type == "Softsign")
    return x / (1.0 + std::fabs(x));
  if (type == "Clip") {
    double lo = a.f("min", -std::numeric_limits<double>::infinity());
    double hi = a.f("max", std::numeric_limits<double>::infinity());
    return std::min(std::max(x, lo), hi);
  }
  SPYRE_UNREACHABLE("unary host op without a formula: " + type);
}

HostInference inferUnary(const HostOp &op, const Attrs &a,
                         std::span<const HostShape> in) {
  // Evaluating once checks the attribute types.
  (void)unaryValue(op.opType, a, 0.5);
  return {{in[0]}, countOf(in[0]), {}};
}

std::vector<HostTensor> runUnary(const HostOp &op, const Attrs &a,
                                 std::span<const HostTensor> in) {
  HostTensor out{in[0].shape, in[0].data};
  for (double &v : out.data)
    v = unaryValue(op.opType, a, v);
  return {std::move(out)};
}

// ---- Min, Max ----

HostInference inferMinMax(const HostOp &, const Attrs &,
                          std::span<const HostShape> in) {
  HostShape s = in[0];
  for (size_t i = 1; i < in.size(); ++i)
    s = broadcast(s, in[i]);
  return {{s}, countOf(s) * (in.size() - 1), {}};
}

std::vector<HostTensor> runMinMax(const HostOp &op, const Attrs &,
                                  std::span<const HostTensor> in) {
  HostShape s = in[0].shape;
  for (size_t i = 1; i < in.size(); ++i)
    s = broadcast(s, in[i].shape);
  const bool isMax = op.opType == "Max";
  std::vector<std::vector<int64_t>> strides;
  for (const HostTensor &t : in)
    strides.push_back(stridesOf(t.shape));
  HostTensor out{s, std::vector<double>(countOf(s))};
  forEachIndex(s, [&](uint64_t k, const std::vector<int64_t> &idx) {
    double r = broadcastAt(in[0], idx, strides[0]);
    for (size_t i = 1; i < in.size(); ++i) {
      double v = broadcastAt(in[i], idx, strides[i]);
      if (std::isnan(v) || std::isnan(r))
        r = std::numeric_limits<double>::quiet_NaN();
      else
        r = isMax ? std::max(r, v) : std::min(r, v);
    }
    out.data[k] = r;
  });
  return {std::move(out)};
}

// ---- Pow ----

HostInference inferPow(const HostOp &, const Attrs &,
                       std::span<const HostShape> in) {
  HostShape s = broadcast(in[0], in[1]);
  return {{s}, countOf(s), {}};
}

std::vector<HostTensor> runPow(const HostOp &, const Attrs &,
                               std::span<const HostTensor> in) {
  const HostShape s = broadcast(in[0].shape, in[1].shape);
  const std::vector<int64_t> xs = stridesOf(in[0].shape);
  const std::vector<int64_t> ys = stridesOf(in[1].shape);
  HostTensor out{s, std::vector<double>(countOf(s))};
  forEachIndex(s, [&](uint64_t k, const std::vector<int64_t> &idx) {
    out.data[k] = std::pow(broadcastAt(in[0], idx, xs),
                           broadcastAt(in[1], idx, ys));
  });
  return {std::move(out)};
}

// ---- Slice ----

struct SliceDims {
  std::vector<int64_t> start, step;
  HostShape shape;
};

SliceDims sliceDims(const Attrs &a, const HostShape &x) {
  std::vector<int64_t> starts = a.requiredInts("starts");
  std::vector<int64_t> ends = a.requiredInts("ends");
  std::vector<int64_t> axes;
  if (auto given = a.ints("axes"))
    axes = *given;
  else
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> steps =
      a.ints("steps").value_or(std::vector<int64_t>(starts.size(), 1));
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    invalid("starts, ends, axes and steps must have the same length");
  SliceDims r;
  r.start.assign(x.size(), 0);
  r.step.assign(x.size(), 1);
  r.shape = x;
  std::vector<bool> seen(x.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    const auto ax = static_cast<size_t>(normAxis(axes[i], x.size(), "axis"));
    if (seen[ax])
      invalid("axis " + std::to_string(axes[i]) + " is sliced twice");
    seen[ax] = true;
    const int64_t dim = x[ax], step = steps[i];
    if (step == 0)
      invalid("a step is 0");
    // ONNX: negative starts and ends count from the end, then both are
    // clamped to [0, dim] (step > 0) or [-1, dim - 1] (step < 0).
    int64_t s = starts[i], e = ends[i];
    auto wrap = [&](int64_t v) {
      if (v < 0)
        v = v < -dim ? -dim - 1 : v;
      return v < 0 ? v + dim : v;
    };
    s = wrap(s);
    e = wrap(e);
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      // (e - s - 1) / step + 1, not (e - s + step - 1) / step: the step
      // comes from the model and may be near the largest int64.
      r.shape[ax] = e > s ? (e - s - 1) / step + 1 : 0;
    } else {
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      // -step would overflow for the smallest int64; any step at or below
      // -dim takes one element, as does that one.
      const int64_t back = step < -dim ? dim + 1 : -step;
      r.shape[ax] = s > e ? (s - e - 1) / back + 1 : 0;
    }
    r.start[ax] = s;
    r.step[ax] = step;
  }
  return r;
}

HostInference inferSlice(const HostOp &, const Attrs &a,
                         std::span<const HostShape> in) {
  SliceDims d = sliceDims(a, in[0]);
  return {{d.shape}, 0, {}};
}

std::vector<HostTensor> runSlice(const HostOp &, const Attrs &a,
                                 std::span<const HostTensor> in) {
  SliceDims d = sliceDims(a, in[0].shape);
  const std::vector<int64_t> st = stridesOf(in[0].shape);
  HostTensor out{d.shape, std::vector<double>(countOf(d.shape))};
  forEachIndex(d.shape, [&](uint64_t k, const std::vector<int64_t> &idx) {
    int64_t at = 0;
    for (size_t i = 0; i < idx.size(); ++i)
      at += (d.start[i] + idx[i] * d.step[i]) * st[i];
    out.data[k] = in[0].data[static_cast<size_t>(at)];
  });
  return {std::move(out)};
}

// ---- Gather ----

HostInference inferGather(const HostOp &, const Attrs &a,
                          std::span<const HostShape> in) {
  const HostShape &x = in[0];
  if (x.empty())
    invalid("the data input must have rank 1 or more");
  const auto axis = static_cast<size_t>(normAxis(a.i("axis", 0), x.size(), "axis"));
  std::vector<int64_t> indices = a.requiredInts("indices");
  HostShape ishape =
      a.ints("indices_shape").value_or(HostShape{static_cast<int64_t>(indices.size())});
  if (countOf(ishape) != indices.size())
    invalid("indices_shape " + shapeText(ishape) + " does not hold the " +
            std::to_string(indices.size()) + " indices");
  for (int64_t i : indices)
    if (i < -x[axis] || i >= x[axis])
      invalid("index " + std::to_string(i) + " is out of range for dimension " +
              std::to_string(axis) + " of size " + std::to_string(x[axis]));
  HostShape out(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(axis));
  out.insert(out.end(), ishape.begin(), ishape.end());
  out.insert(out.end(), x.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.end());
  return {{out}, 0, {}};
}

std::vector<HostTensor> runGather(const HostOp &op, const Attrs &a,
                                  std::span<const HostTensor> in) {
  const HostShape &x = in[0].shape;
  const auto axis = static_cast<size_t>(normAxis(a.i("axis", 0), x.size(), "axis"));
  std::vector<int64_t> indices = a.requiredInts("indices");
  HostShape shape = inferGather(op, a, std::array{x}).outputs[0];
  // outer x indices x inner.
  uint64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d)
    outer *= static_cast<uint64_t>(x[d]);
  for (size_t d = axis + 1; d < x.size(); ++d)
    inner *= static_cast<uint64_t>(x[d]);
  const auto dim = static_cast<uint64_t>(x[axis]);
  HostTensor out{shape, {}};
  out.data.reserve(countOf(shape));
  for (uint64_t o = 0; o < outer; ++o)
    for (int64_t i : indices) {
      const auto row = static_cast<uint64_t>(i < 0 ? i + x[axis] : i);
      const uint64_t base = (o * dim + row) * inner;
      for (uint64_t k = 0; k < inner; ++k)
        out.data.push_back(in[0].data[base + k]);
    }
  return {std::move(out)};
}

// ---- Expand, Tile, Pad ----

HostInference inferExpand(const HostOp &, const Attrs &a,
                          std::span<const HostShape> in) {
  HostShape target = a.requiredInts("shape");
  for (int64_t d : target)
    if (d < 1)
      invalid("shape " + shapeText(target) + " has a dimension below 1");
  return {{broadcast(in[0], target)}, 0, {}};
}

std::vector<HostTensor> runExpand(const HostOp &op, const Attrs &a,
                                  std::span<const HostTensor> in) {
  HostShape s = inferExpand(op, a, std::array{in[0].shape}).outputs[0];
  const std::vector<int64_t> st = stridesOf(in[0].shape);
  HostTensor out{s, std::vector<double>(countOf(s))};
  forEachIndex(s, [&](uint64_t k, const std::vector<int64_t> &idx) {
    out.data[k] = broadcastAt(in[0], idx, st);
  });
  return {std::move(out)};
}

HostInference inferTile(const HostOp &, const Attrs &a,
                        std::span<const HostShape> in) {
  std::vector<int64_t> reps = a.requiredInts("repeats");
  if (reps.size() != in[0].size())
    invalid("repeats has " + std::to_string(reps.size()) +
            " entries, the input has rank " + std::to_string(in[0].size()));
  HostShape s = in[0];
  for (size_t d = 0; d < s.size(); ++d) {
    if (reps[d] < 0)
      invalid("repeats " + shapeText(reps) + " has a negative entry");
    const std::optional<int64_t> n = checkedMul(s[d], reps[d]);
    if (!n)
      invalid("repeats " + shapeText(reps) + " make dimension " +
              std::to_string(d) + " overflow 64 bits");
    s[d] = *n;
  }
  checkResult(s);
  return {{s}, 0, {}};
}

std::vector<HostTensor> runTile(const HostOp &op, const Attrs &a,
                                std::span<const HostTensor> in) {
  HostShape s = inferTile(op, a, std::array{in[0].shape}).outputs[0];
  const HostShape &x = in[0].shape;
  const std::vector<int64_t> st = stridesOf(x);
  HostTensor out{s, std::vector<double>(countOf(s))};
  forEachIndex(s, [&](uint64_t k, const std::vector<int64_t> &idx) {
    int64_t at = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      at += (idx[d] % x[d]) * st[d];
    out.data[k] = in[0].data[static_cast<size_t>(at)];
  });
  return {std::move(out)};
}

HostInference inferPad(const HostOp &, const Attrs &a,
                       std::span<const HostShape> in) {
  if (a.s("mode", "constant") != "constant")
    invalid("mode '" + a.s("mode", "constant") +
            "' is not supported (only constant)");
  (void)a.f("constant_value", 0.0);
  std::vector<int64_t> pads = a.requiredInts("pads");
  const HostShape &x = in[0];
  if (pads.size() != 2 * x.size())
    invalid("pads has " + std::to_string(pads.size()) +
            " entries, twice the rank is " + std::to_string(2 * x.size()));
  HostShape s = x;
  for (size_t d = 0; d < x.size(); ++d) {
    std::optional<int64_t> n = checkedAdd(x[d], pads[d]);
    if (n)
      n = checkedAdd(*n, pads[d + x.size()]);
    if (!n)
      invalid("pads " + shapeText(pads) + " make dimension " +
              std::to_string(d) + " overflow 64 bits");
    s[d] = *n;
    if (s[d] < 0)
      invalid("pads " + shapeText(pads) + " crop dimension " +
              std::to_string(d) + " below zero");
  }
  checkResult(s);
  return {{s}, 0, {}};
}

std::vector<HostTensor> runPad(const HostOp &op, const Attrs &a,
                               std::span<const HostTensor> in) {
  HostShape s = inferPad(op, a, std::array{in[0].shape}).outputs[0];
  std::vector<int64_t> pads = a.requiredInts("pads");
  const double fill = a.f("constant_value", 0.0);
  const HostShape &x = in[0].shape;
  const std::vector<int64_t> st = stridesOf(x);
  HostTensor out{s, std::vector<double>(countOf(s))};
  forEachIndex(s, [&](uint64_t k, const std::vector<int64_t> &idx) {
    int64_t at = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      const int64_t src = idx[d] - pads[d];
      if (src < 0 || src >= x[d]) {
        out.data[k] = fill;
        return;
      }
      at += src * st[d];
    }
    out.data[k] = in[0].data[static_cast<size_t>(at)];
  });
  return {std::move(out)};
}

// ---- CumSum ----

HostInference inferCumSum(const HostOp &, const Attrs &a,
                          std::span<const HostShape> in) {
  if (in[0].empty())
    invalid("the input must have rank 1 or more");
  (void)normAxis(a.i("axis", 0), in[0].size(), "axis");
  (void)a.i("exclusive", 0);
  (void)a.i("reverse", 0);
  return {{in[0]}, countOf(in[0]), {}};
}

std::vector<HostTensor> runCumSum(const HostOp &, const Attrs &a,
                                  std::span<const HostTensor> in) {
  const HostShape &x = in[0].shape;
  const auto axis = static_cast<size_t>(normAxis(a.i("axis", 0), x.size(), "axis"));
  const bool exclusive = a.i("exclusive", 0) != 0, reverse = a.i("reverse", 0) != 0;
  const std::vector<int64_t> st = stridesOf(x);
  HostTensor out{x, std::vector<double>(in[0].data.size())};
  const int64_t n = x[axis], stride = st[axis];
  forEachIndex(x, [&](uint64_t k, const std::vector<int64_t> &idx) {
    if (idx[axis] != 0)
      return;
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = reverse ? n - 1 - j : j;
      const auto at = static_cast<size_t>(static_cast<int64_t>(k) + i * stride);
      if (exclusive) {
        out.data[at] = sum;
        sum += in[0].data[at];
      } else {
        sum += in[0].data[at];
        out.data[at] = sum;
      }
    }
  });
  return {std::move(out)};
}

// ---- Reductions and LogSoftmax ----

std::vector<bool> reducedAxes(const Attrs &a, size_t rank) {
  std::vector<bool> r(rank, false);
  std::optional<std::vector<int64_t>> axes = a.ints("axes");
  if (!axes || axes->empty()) {
    if (a.i("noop_with_empty_axes", 0) != 0)
      return r;
    r.assign(rank, true);
    return r;
  }
  for (int64_t ax : *axes) {
    const auto k = static_cast<size_t>(normAxis(ax, rank, "axis"));
    if (r[k])
      invalid("axis " + std::to_string(ax) + " is listed twice");
    r[k] = true;
  }
  return r;
}

HostShape reducedShape(const HostShape &x, const std::vector<bool> &axes,
                       bool keep) {
  HostShape s;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!axes[d])
      s.push_back(x[d]);
    else if (keep)
      s.push_back(1);
  }
  return s;
}

HostInference inferReduce(const HostOp &, const Attrs &a,
                          std::span<const HostShape> in) {
  std::vector<bool> axes = reducedAxes(a, in[0].size());
  return {{reducedShape(in[0], axes, a.i("keepdims", 1) != 0)}, countOf(in[0]),
          {}};
}

std::vector<HostTensor> runReduce(const HostOp &op, const Attrs &a,
                                  std::span<const HostTensor> in) {
  const HostShape &x = in[0].shape;
  std::vector<bool> axes = reducedAxes(a, x.size());
  const HostShape kept = reducedShape(x, axes, true);
  const std::vector<int64_t> ks = stridesOf(kept);
  // Group the inputs of each result in row-major order, then reduce.
  std::vector<std::vector<double>> groups(countOf(kept));
  forEachIndex(x, [&](uint64_t k, const std::vector<int64_t> &idx) {
    int64_t at = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      if (!axes[d])
        at += idx[d] * ks[d];
    groups[static_cast<size_t>(at)].push_back(in[0].data[k]);
  });
  const std::string &t = op.opType;
  HostTensor out{reducedShape(x, axes, a.i("keepdims", 1) != 0), {}};
  for (const std::vector<double> &g : groups) {
    double r = 0;
    if (t == "ReduceMin" || t == "ReduceMax") {
      r = t == "ReduceMin" ? std::numeric_limits<double>::infinity()
                           : -std::numeric_limits<double>::infinity();
      for (double v : g)
        r = std::isnan(v) || std::isnan(r) ? std::numeric_limits<double>::quiet_NaN()
            : t == "ReduceMin"             ? std::min(r, v)
                                           : std::max(r, v);
    } else if (t == "ReduceProd") {
      r = 1;
      for (double v : g)
        r *= v;
    } else if (t == "ReduceL1") {
      for (double v : g)
        r += std::fabs(v);
    } else if (t == "ReduceL2") {
      for (double v : g)
        r += v * v;
      r = std::sqrt(r);
    } else if (t == "ReduceSumSquare") {
      for (double v : g)
        r += v * v;
    } else if (t == "ReduceLogSum") {
      for (double v : g)
        r += v;
      r = std::log(r);
    } else {
      SPYRE_ASSERT(t == "ReduceLogSumExp", "reduction without a formula: " + t);
      double m = -std::numeric_limits<double>::infinity();
      for (double v : g)
        m = std::max(m, v);
      if (std::isinf(m)) {
        r = m;
      } else {
        for (double v : g)
          r += std::exp(v - m);
        r = m + std::log(r);
      }
    }
    out.data.push_back(r);
  }
  return {std::move(out)};
}

HostInference inferLogSoftmax(const HostOp &, const Attrs &a,
                              std::span<const HostShape> in) {
  if (in[0].empty())
    invalid("the input must have rank 1 or more");
  (void)normAxis(a.i("axis", -1), in[0].size(), "axis");
  return {{in[0]}, 4 * countOf(in[0]), {}};
}

std::vector<HostTensor> runLogSoftmax(const HostOp &, const Attrs &a,
                                      std::span<const HostTensor> in) {
  const HostShape &x = in[0].shape;
  const auto axis = static_cast<size_t>(normAxis(a.i("axis", -1), x.size(), "axis"));
  const std::vector<int64_t> st = stridesOf(x);
  const int64_t n = x[axis], stride = st[axis];
  HostTensor out{x, std::vector<double>(in[0].data.size())};
  forEachIndex(x, [&](uint64_t k, const std::vector<int64_t> &idx) {
    if (idx[axis] != 0)
      return;
    auto at = [&](int64_t i) {
      return static_cast<size_t>(static_cast<int64_t>(k) + i * stride);
    };
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i)
      m = std::max(m, in[0].data[at(i)]);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i)
      sum += std::exp(in[0].data[at(i)] - m);
    // (x - max) - log(sum): subtracting max + log(sum) at once would lose
    // the low bits of log(sum) next to a large max.
    const double logSum = std::log(sum);
    for (int64_t i = 0; i < n; ++i)
      out.data[at(i)] = (in[0].data[at(i)] - m) - logSum;
  });
  return {std::move(out)};
}

const std::vector<std::string_view> kNoAttrs = {};

const std::vector<Row> &rows() {
  static const std::vector<Row> table = [] {
    std::vector<Row> t;
    auto unary = [&](std::string_view name,
                     std::vector<std::string_view> attrs = {}) {
      t.push_back({name, std::move(attrs), 1, false, inferUnary, runUnary});
    };
    for (std::string_view n :
         {"Log", "Sin", "Cos", "Tan", "Atan", "Asin", "Acos", "Sinh", "Cosh",
          "Floor", "Ceil", "Round", "Sign", "HardSwish", "Softplus",
          "Softsign"})
      unary(n);
    unary("LeakyRelu", {"alpha"});
    unary("Elu", {"alpha"});
    unary("Selu", {"alpha", "gamma"});
    unary("HardSigmoid", {"alpha", "beta"});
    unary("Clip", {"min", "max"});
    t.push_back({"Min", {}, 1, true, inferMinMax, runMinMax});
    t.push_back({"Max", {}, 1, true, inferMinMax, runMinMax});
    t.push_back({"Pow", {}, 2, false, inferPow, runPow});
    t.push_back({"Slice", {"starts", "ends", "axes", "steps"}, 1, false,
                 inferSlice, runSlice});
    t.push_back({"Gather", {"axis", "indices", "indices_shape"}, 1, false,
                 inferGather, runGather});
    t.push_back({"Expand", {"shape"}, 1, false, inferExpand, runExpand});
    t.push_back({"Tile", {"repeats"}, 1, false, inferTile, runTile});
    t.push_back({"Pad", {"pads", "constant_value", "mode"}, 1, false, inferPad,
                 runPad});
    t.push_back({"CumSum", {"axis", "exclusive", "reverse"}, 1, false,
                 inferCumSum, runCumSum});
    for (std::string_view n :
         {"ReduceMin", "ReduceMax", "ReduceProd", "ReduceL1", "ReduceL2",
          "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
      t.push_back({n, {"axes", "keepdims", "noop_with_empty_axes"}, 1, false,
                   inferReduce, runReduce});
    t.push_back({"LogSoftmax", {"axis"}, 1, false, inferLogSoftmax,
                 runLogSoftmax});
    std::sort(t.begin(), t.end(),
              [](const Row &a, const Row &b) { return a.opType < b.opType; });
    return t;
  }();
  return table;
}

const Row *findRow(std::string_view opType) {
  for (const Row &r : rows())
    if (r.opType == opType)
      return &r;
  return nullptr;
}

std::vector<std::string_view> sortedTypes() {
  std::vector<std::string_view> out;
  for (const Row &r : rows())
    out.push_back(r.opType);
  return out;
}

} // namespace

std::span<const std::string_view> hostOpTypes() {
  static const std::vector<std::string_view> types = sortedTypes();
  return types;
}

bool isHostOpType(std::string_view opType) { return findRow(opType) != nullptr; }

HostInference inferHostOp(const HostOp &op, std::span<const HostShape> inputs) {
  const Row *row = findRow(op.opType);
  HostInference bad;
  if (!row) {
    bad.error = "op type '" + op.opType + "' has no host implementation";
    return bad;
  }
  if (!op.attrs.is_object()) {
    bad.error = "the attributes must be a JSON object";
    return bad;
  }
  for (auto it = op.attrs.begin(); it != op.attrs.end(); ++it)
    if (std::find(row->attrs.begin(), row->attrs.end(), it.key()) ==
        row->attrs.end()) {
      std::string known;
      for (std::string_view a : row->attrs)
        known += (known.empty() ? "" : ", ") + std::string(a);
      bad.error = "unknown attribute '" + it.key() + "' (" + op.opType +
                  (known.empty() ? " takes none)" : " takes " + known + ")");
      return bad;
    }
  if (inputs.size() < row->minInputs ||
      (!row->variadic && inputs.size() != row->minInputs)) {
    bad.error = op.opType + " takes " +
                (row->variadic ? "at least " : "") +
                std::to_string(row->minInputs) + " float input" +
                (row->minInputs == 1 ? "" : "s") + ", got " +
                std::to_string(inputs.size());
    return bad;
  }
  try {
    HostInference r = row->infer(op, Attrs(op.attrs), inputs);
    for (const HostShape &s : r.outputs)
      checkResult(s);
    return r;
  } catch (const Invalid &e) {
    bad.error = e.message;
    return bad;
  }
}

std::optional<std::string> hostOpUnsupported(const HostOp &op,
                                             std::span<const HostShape> inputs) {
  HostInference r = inferHostOp(op, inputs);
  if (r.ok())
    return std::nullopt;
  return r.error;
}

uint64_t hostOpFlops(const HostOp &op, std::span<const HostShape> inputs) {
  return inferHostOp(op, inputs).flops;
}

std::vector<HostTensor> runHostOp(const HostOp &op,
                                  std::span<const HostTensor> inputs) {
  std::vector<HostShape> shapes;
  for (const HostTensor &t : inputs) {
    SPYRE_ASSERT(t.data.size() == countOf(t.shape),
                 "host tensor data does not match its shape");
    shapes.push_back(t.shape);
  }
  HostInference inf = inferHostOp(op, shapes);
  SPYRE_ASSERT(inf.ok(), "host op run without passing inference: " + inf.error);
  const Row *row = findRow(op.opType);
  std::vector<HostTensor> out = row->run(op, Attrs(op.attrs), inputs);
  SPYRE_ASSERT(out.size() == inf.outputs.size(), "host op result count");
  for (size_t i = 0; i < out.size(); ++i)
    SPYRE_ASSERT(out[i].shape == inf.outputs[i] &&
                     out[i].data.size() == countOf(out[i].shape),
                 "host op result shape differs from its inference");
  return out;
}

std::optional<nlohmann::json> parseHostAttrs(std::string_view text,
                                             std::string &error) {
  if (std::optional<TextPos> deep = findJsonTooDeep(text)) {
    error = "the attributes nest deeper than " + std::to_string(kMaxJsonDepth) +
            " levels of arrays and objects (at byte " +
            std::to_string(deep->offset) + ")";
    return std::nullopt;
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    error = "the attributes are not valid JSON";
    return std::nullopt;
  }
  if (!j.is_object()) {
    error = "the attributes must be a JSON object";
    return std::nullopt;
  }
  return j;
}

std::string hostAttrsText(const nlohmann::json &attrs) { return attrs.dump(); }

} // namespace spyre::host
