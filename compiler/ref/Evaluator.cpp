#include "compiler/ref/Evaluator.h"

#include "host/HostOp.h"

#include "numerics/Half.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace spyre::compiler::ref {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Neumaier's compensated sum: the error of a long sum stays at a few ulps
/// of the result instead of growing with the number of terms.
class CompensatedSum {
public:
  void add(double x) {
    double t = sum_ + x;
    if (std::fabs(sum_) >= std::fabs(x))
      compensation_ += (sum_ - t) + x;
    else
      compensation_ += (x - t) + sum_;
    sum_ = t;
  }
  double value() const { return sum_ + compensation_; }

private:
  double sum_ = 0;
  double compensation_ = 0;
};

int64_t product(Shape::const_iterator begin, Shape::const_iterator end) {
  int64_t n = 1;
  for (auto it = begin; it != end; ++it)
    n *= *it;
  return n;
}

/// Strides of `shape` for indexing a tensor broadcast to `outShape`
/// (aligned from the right; broadcast dimensions get stride 0).
std::vector<int64_t> broadcastStrides(const Shape &shape, const Shape &outShape) {
  std::vector<int64_t> own = rowMajorStrides(shape);
  std::vector<int64_t> out(outShape.size(), 0);
  size_t offset = outShape.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    out[offset + d] = shape[d] == 1 ? 0 : own[d];
  return out;
}

/// Calls f(flatIndex, offsets...) for every element of `shape` in row-major
/// order, where each offset walks one of `strides` (an odometer, so no
/// per-element division).
template <typename F>
void forEachOffset(const Shape &shape,
                   const std::vector<std::vector<int64_t>> &strides, F f) {
  int64_t n = shapeElementCount(shape);
  size_t rank = shape.size();
  std::vector<int64_t> idx(rank, 0);
  std::vector<int64_t> offsets(strides.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    f(flat, offsets);
    for (size_t d = rank; d-- > 0;) {
      for (size_t s = 0; s < strides.size(); ++s)
        offsets[s] += strides[s][d];
      if (++idx[d] < shape[d])
        break;
      for (size_t s = 0; s < strides.size(); ++s)
        offsets[s] -= strides[s][d] * shape[d];
      idx[d] = 0;
    }
  }
}

double sigmoid(double x) {
  // Written so that exp never overflows.
  if (x >= 0)
    return 1 / (1 + std::exp(-x));
  double e = std::exp(x);
  return e / (1 + e);
}

/// A host op through the host library, the same code the simulator runs.
std::vector<RefTensor> hostOp(const Op &op,
                              const std::vector<const RefTensor *> &operands) {
  std::string why;
  std::optional<nlohmann::json> attrs =
      host::parseHostAttrs(op.stringAttr("attrs"), why);
  SPYRE_ASSERT(attrs, "verified host op '" + op.name() + "' has bad attrs");
  std::vector<host::HostTensor> in;
  for (const RefTensor *t : operands)
    in.push_back({t->shape, t->values});
  std::vector<RefTensor> out;
  for (host::HostTensor &t :
       host::runHostOp({op.stringAttr("op"), std::move(*attrs)}, in))
    out.push_back({std::move(t.shape), std::move(t.data)});
  return out;
}

double unaryValue(const Op &op, double x) {
  switch (op.kind()) {
  case OpKind::Relu:
    return x > 0 || std::isnan(x) ? x : 0.0;
  case OpKind::Gelu:
    if (op.stringAttr("approximate") == "tanh") {
      constexpr double kSqrt2OverPi = 0.79788456080286535588; // sqrt(2 / pi)
      return 0.5 * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    }
    return 0.5 * x * (1 + std::erf(x * 0.70710678118654752440)); // 1 / sqrt(2)
  case OpKind::Silu:
    return x * sigmoid(x);
  case OpKind::Sigmoid:
    return sigmoid(x);
  case OpKind::Tanh:
    return std::tanh(x);
  case OpKind::Erf:
    return std::erf(x);
  case OpKind::Exp:
    return std::exp(x);
  case OpKind::Sqrt:
    return std::sqrt(x);
  case OpKind::Rsqrt:
    return 1 / std::sqrt(x);
  case OpKind::Reciprocal:
    return 1 / x;
  case OpKind::Neg:
    return -x;
  case OpKind::Abs:
    return std::fabs(x);
  case OpKind::Pow:
    return std::pow(x, op.floatAttr("exponent"));
  default:
    SPYRE_UNREACHABLE("not a unary op");
  }
}

RefTensor unary(const Op &op, const RefTensor &x) {
  RefTensor y{x.shape, std::vector<double>(x.values.size())};
  for (size_t i = 0; i < x.values.size(); ++i)
    y.values[i] = unaryValue(op, x.values[i]);
  return y;
}

RefTensor binary(const Op &op, const RefTensor &a, const RefTensor &b) {
  const Shape &shape = op.result()->type().shape;
  RefTensor y{shape, std::vector<double>(static_cast<size_t>(shapeElementCount(shape)))};
  OpKind kind = op.kind();
  forEachOffset(shape, {broadcastStrides(a.shape, shape), broadcastStrides(b.shape, shape)},
                [&](int64_t flat, const std::vector<int64_t> &off) {
                  double x = a.values[static_cast<size_t>(off[0])];
                  double z = b.values[static_cast<size_t>(off[1])];
                  double r = kind == OpKind::Add   ? x + z
                             : kind == OpKind::Sub ? x - z
                             : kind == OpKind::Mul ? x * z
                                                   : x / z;
                  y.values[static_cast<size_t>(flat)] = r;
                });
  return y;
}

RefTensor matmul(const Op &op, const RefTensor &a, const RefTensor &b) {
  bool ta = op.boolAttr("transpose_a"), tb = op.boolAttr("transpose_b");
  const Shape &shape = op.result()->type().shape;
  size_t r = shape.size();
  int64_t m = shape[r - 2], n = shape[r - 1];
  int64_t k = ta ? a.shape[a.shape.size() - 2] : a.shape.back();
  Shape batch(shape.begin(), shape.end() - 2);
  Shape batchA(a.shape.begin(), a.shape.end() - 2);
  Shape batchB(b.shape.begin(), b.shape.end() - 2);
  // Batch strides in units of whole matrices.
  std::vector<int64_t> strideA = broadcastStrides(batchA, batch);
  std::vector<int64_t> strideB = broadcastStrides(batchB, batch);
  RefTensor y{shape, std::vector<double>(static_cast<size_t>(shapeElementCount(shape)), 0.0)};
  std::vector<double> row(static_cast<size_t>(n));
  forEachOffset(batch, {strideA, strideB}, [&](int64_t flat,
                                              const std::vector<int64_t> &off) {
    const double *pa = a.values.data() + off[0] * m * k;
    const double *pb = b.values.data() + off[1] * k * n;
    double *py = y.values.data() + flat * m * n;
    for (int64_t i = 0; i < m; ++i) {
      // Every output element sums its products in increasing k, whichever
      // loop order reads memory best.
      if (tb) {
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t p = 0; p < k; ++p)
            s += (ta ? pa[p * m + i] : pa[i * k + p]) * pb[j * k + p];
          py[i * n + j] = s;
        }
        continue;
      }
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t p = 0; p < k; ++p) {
        double av = ta ? pa[p * m + i] : pa[i * k + p];
        const double *brow = pb + p * n;
        for (int64_t j = 0; j < n; ++j)
          row[static_cast<size_t>(j)] += av * brow[j];
      }
      std::copy(row.begin(), row.end(), py + i * n);
    }
  });
  return y;
}

RefTensor linear(const Op &op, const RefTensor &x, const RefTensor &w,
                 const RefTensor *bias) {
  const Shape &shape = op.result()->type().shape;
  int64_t in = w.shape[1], out = w.shape[0];
  int64_t rows = x.elementCount() / in;
  RefTensor y{shape, std::vector<double>(static_cast<size_t>(rows * out))};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = 0;
      const double *xr = x.values.data() + r * in;
      const double *wr = w.values.data() + o * in;
      for (int64_t i = 0; i < in; ++i)
        s += xr[i] * wr[i];
      y.values[static_cast<size_t>(r * out + o)] =
          s + (bias ? bias->values[static_cast<size_t>(o)] : 0.0);
    }
  return y;
}

RefTensor softmax(const Op &op, const RefTensor &x) {
  size_t axis = static_cast<size_t>(
      *normalizeAxis(op.intAttr("axis"), static_cast<int64_t>(x.shape.size())));
  int64_t outer = product(x.shape.begin(), x.shape.begin() + static_cast<std::ptrdiff_t>(axis));
  int64_t n = x.shape[axis];
  int64_t inner = product(x.shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.shape.end());
  RefTensor y{x.shape, std::vector<double>(x.values.size())};
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t i) { return static_cast<size_t>((o * n + i) * inner + in); };
      double mx = -kInf;
      for (int64_t i = 0; i < n; ++i)
        mx = std::isnan(x.values[at(i)]) || x.values[at(i)] > mx ? x.values[at(i)] : mx;
      CompensatedSum sum;
      for (int64_t i = 0; i < n; ++i) {
        y.values[at(i)] = std::exp(x.values[at(i)] - mx);
        sum.add(y.values[at(i)]);
      }
      double total = sum.value();
      for (int64_t i = 0; i < n; ++i)
        y.values[at(i)] /= total;
    }
  return y;
}

RefTensor normalize(const Op &op, const RefTensor &x, const RefTensor *weight,
                    const RefTensor *bias) {
  size_t axis = static_cast<size_t>(
      *normalizeAxis(op.intAttr("axis"), static_cast<int64_t>(x.shape.size())));
  int64_t n = product(x.shape.begin() + static_cast<std::ptrdiff_t>(axis), x.shape.end());
  int64_t outer = x.elementCount() / n;
  double eps = op.floatAttr("epsilon");
  bool rms = op.kind() == OpKind::RmsNorm;
  RefTensor y{x.shape, std::vector<double>(x.values.size())};
  for (int64_t o = 0; o < outer; ++o) {
    const double *xs = x.values.data() + o * n;
    double *ys = y.values.data() + o * n;
    double mean = 0;
    if (!rms) {
      CompensatedSum s;
      for (int64_t i = 0; i < n; ++i)
        s.add(xs[i]);
      mean = s.value() / static_cast<double>(n);
    }
    // Second pass over the centred values: the variance never suffers the
    // cancellation of E[x^2] - E[x]^2.
    CompensatedSum sq;
    for (int64_t i = 0; i < n; ++i)
      sq.add((xs[i] - mean) * (xs[i] - mean));
    double scale = 1 / std::sqrt(sq.value() / static_cast<double>(n) + eps);
    for (int64_t i = 0; i < n; ++i) {
      double v = (xs[i] - mean) * scale;
      if (weight)
        v *= weight->values[static_cast<size_t>(i)];
      if (bias)
        v += bias->values[static_cast<size_t>(i)];
      ys[i] = v;
    }
  }
  return y;
}

RefTensor reduce(const Op &op, const RefTensor &x) {
  size_t rank = x.shape.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : op.intsAttr("axes"))
    reduced[static_cast<size_t>(*normalizeAxis(a, static_cast<int64_t>(rank)))] = true;
  // Output offsets with the reduced dimensions kept as size 1 (same element
  // order as the result, with or without keepdims).
  Shape kept = x.shape;
  for (size_t d = 0; d < rank; ++d)
    if (reduced[d])
      kept[d] = 1;
  std::vector<int64_t> keptStrides = rowMajorStrides(kept);
  for (size_t d = 0; d < rank; ++d)
    if (reduced[d])
      keptStrides[d] = 0;
  size_t outCount = static_cast<size_t>(shapeElementCount(kept));
  std::vector<CompensatedSum> sums(outCount);
  std::vector<double> maxima(outCount, -kInf);
  OpKind kind = op.kind();
  forEachOffset(x.shape, {keptStrides}, [&](int64_t flat, const std::vector<int64_t> &off) {
    double v = x.values[static_cast<size_t>(flat)];
    auto o = static_cast<size_t>(off[0]);
    if (kind == OpKind::ReduceMax)
      maxima[o] = std::isnan(v) || std::isnan(maxima[o]) ? std::nan("") : std::max(maxima[o], v);
    else
      sums[o].add(v);
  });
  double count = static_cast<double>(x.elementCount()) / static_cast<double>(outCount);
  RefTensor y{op.result()->type().shape, std::vector<double>(outCount)};
  for (size_t i = 0; i < outCount; ++i)
    y.values[i] = kind == OpKind::ReduceMax    ? maxima[i]
                  : kind == OpKind::ReduceMean ? sums[i].value() / count
                                               : sums[i].value();
  return y;
}

RefTensor transpose(const Op &op, const RefTensor &x) {
  std::vector<int64_t> perm = op.intsAttr("perm");
  std::vector<int64_t> inStrides = rowMajorStrides(x.shape);
  std::vector<int64_t> strides;
  Shape shape;
  for (int64_t p : perm) {
    shape.push_back(x.shape[static_cast<size_t>(p)]);
    strides.push_back(inStrides[static_cast<size_t>(p)]);
  }
  RefTensor y{shape, std::vector<double>(x.values.size())};
  forEachOffset(shape, {strides}, [&](int64_t flat, const std::vector<int64_t> &off) {
    y.values[static_cast<size_t>(flat)] = x.values[static_cast<size_t>(off[0])];
  });
  return y;
}

std::vector<RefTensor> split(const Op &op, const RefTensor &x) {
  size_t axis = static_cast<size_t>(
      *normalizeAxis(op.intAttr("axis"), static_cast<int64_t>(x.shape.size())));
  int64_t outer = product(x.shape.begin(), x.shape.begin() + static_cast<std::ptrdiff_t>(axis));
  int64_t dim = x.shape[axis];
  int64_t inner = product(x.shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.shape.end());
  std::vector<RefTensor> out;
  int64_t start = 0;
  for (int64_t size : op.intsAttr("sizes")) {
    RefTensor piece{x.shape, {}};
    piece.shape[axis] = size;
    piece.values.reserve(static_cast<size_t>(outer * size * inner));
    for (int64_t o = 0; o < outer; ++o) {
      auto from = x.values.begin() + (o * dim + start) * inner;
      piece.values.insert(piece.values.end(), from, from + size * inner);
    }
    start += size;
    out.push_back(std::move(piece));
  }
  return out;
}

RefTensor concat(const Op &op, const std::vector<const RefTensor *> &inputs) {
  const Shape &shape = op.result()->type().shape;
  size_t axis = static_cast<size_t>(
      *normalizeAxis(op.intAttr("axis"), static_cast<int64_t>(shape.size())));
  int64_t outer = product(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(axis));
  int64_t inner = product(shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, shape.end());
  RefTensor y{shape, {}};
  y.values.reserve(static_cast<size_t>(shapeElementCount(shape)));
  for (int64_t o = 0; o < outer; ++o)
    for (const RefTensor *t : inputs) {
      int64_t chunk = t->shape[axis] * inner;
      auto from = t->values.begin() + o * chunk;
      y.values.insert(y.values.end(), from, from + chunk);
    }
  return y;
}

RefTensor causalMaskAdd(const RefTensor &x) {
  size_t r = x.shape.size();
  int64_t q = x.shape[r - 2], k = x.shape[r - 1];
  RefTensor y = x;
  for (size_t flat = 0; flat < y.values.size(); ++flat) {
    auto f = static_cast<int64_t>(flat);
    int64_t j = f % k, i = (f / k) % q;
    if (j > i + (k - q))
      y.values[flat] += -kInf;
  }
  return y;
}

/// softmax(x * scale + causal mask) over the last axis, as its three ops
/// compute it in turn (IEEE arithmetic on the masked elements too).
RefTensor causalSoftmax(const Op &op, const RefTensor &x) {
  const double scale = op.floatAttr("scale");
  RefTensor s = x;
  for (double &v : s.values)
    v *= scale;
  s = causalMaskAdd(s);
  const int64_t n = x.shape.back();
  RefTensor y{x.shape, std::vector<double>(x.values.size())};
  for (size_t row = 0; row < s.values.size(); row += static_cast<size_t>(n)) {
    double mx = -kInf;
    for (int64_t j = 0; j < n; ++j) {
      const double v = s.values[row + static_cast<size_t>(j)];
      mx = std::isnan(v) || v > mx ? v : mx;
    }
    CompensatedSum sum;
    for (int64_t j = 0; j < n; ++j) {
      const size_t at = row + static_cast<size_t>(j);
      y.values[at] = std::exp(s.values[at] - mx);
      sum.add(y.values[at]);
    }
    const double total = sum.value();
    for (int64_t j = 0; j < n; ++j)
      y.values[row + static_cast<size_t>(j)] /= total;
  }
  return y;
}

/// Grouped-query attention in double: per query head h and its key/value
/// head h / (H / KV), softmax(q k^T * scale [+ causal mask]) v, the masked
/// scores left out (a query always sees key 0 under the mask).
/// [B, KV, L, D] and [B, KV, M, D] joined along the tokens.
RefTensor joinTokens(const RefTensor &a, const RefTensor &b) {
  const int64_t rows = a.shape[0] * a.shape[1], la = a.shape[2],
                lb = b.shape[2], d = a.shape[3];
  RefTensor out{{a.shape[0], a.shape[1], la + lb, d}, {}};
  out.values.reserve(a.values.size() + b.values.size());
  for (int64_t r = 0; r < rows; ++r) {
    const auto ai = a.values.begin() + static_cast<std::ptrdiff_t>(r * la * d);
    const auto bi = b.values.begin() + static_cast<std::ptrdiff_t>(r * lb * d);
    out.values.insert(out.values.end(), ai, ai + la * d);
    out.values.insert(out.values.end(), bi, bi + lb * d);
  }
  return out;
}

RefTensor attention(const Op &op, const RefTensor &q, const RefTensor &k,
                    const RefTensor &v) {
  const double scale = op.floatAttr("scale");
  const bool causal = op.boolAttr("causal");
  const int64_t B = q.shape[0], H = q.shape[1], S = q.shape[2],
                D = q.shape[3], KV = k.shape[1], L = k.shape[2];
  const int64_t G = H / KV;
  RefTensor y{q.shape, std::vector<double>(q.values.size(), 0.0)};
  std::vector<double> p(static_cast<size_t>(L));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t j = h / G;
      const size_t qb = static_cast<size_t>((b * H + h) * S * D);
      const size_t kb = static_cast<size_t>((b * KV + j) * L * D);
      for (int64_t i = 0; i < S; ++i) {
        const int64_t seen = causal ? i + (L - S) + 1 : L;
        double mx = -kInf;
        for (int64_t t = 0; t < seen; ++t) {
          CompensatedSum dot;
          for (int64_t d = 0; d < D; ++d)
            dot.add(q.values[qb + static_cast<size_t>(i * D + d)] *
                    k.values[kb + static_cast<size_t>(t * D + d)]);
          p[static_cast<size_t>(t)] = dot.value() * scale;
          mx = std::isnan(p[static_cast<size_t>(t)]) ||
                       p[static_cast<size_t>(t)] > mx
                   ? p[static_cast<size_t>(t)]
                   : mx;
        }
        CompensatedSum total;
        for (int64_t t = 0; t < seen; ++t) {
          p[static_cast<size_t>(t)] = std::exp(p[static_cast<size_t>(t)] - mx);
          total.add(p[static_cast<size_t>(t)]);
        }
        const double sum = total.value();
        for (int64_t d = 0; d < D; ++d) {
          CompensatedSum acc;
          for (int64_t t = 0; t < seen; ++t)
            acc.add(p[static_cast<size_t>(t)] *
                    v.values[kb + static_cast<size_t>(t * D + d)]);
          y.values[qb + static_cast<size_t>(i * D + d)] = acc.value() / sum;
        }
      }
    }
  return y;
}

/// x * cos + (x with the halves of each head swapped) * sin.
RefTensor rotary(const Op &op, const RefTensor &x, const RefTensor &cos,
                 const RefTensor &sin) {
  const int64_t d = op.intAttr("head_dim"), half = d / 2;
  // Tables of one head's size serve every head of their row.
  const int64_t n = x.shape.back(), tn = cos.shape.back();
  RefTensor y{x.shape, std::vector<double>(x.values.size())};
  for (size_t i = 0; i < x.values.size(); ++i) {
    const int64_t at = static_cast<int64_t>(i), within = at % d;
    const size_t other = within < half ? i + static_cast<size_t>(half)
                                       : i - static_cast<size_t>(half);
    const auto t = static_cast<size_t>(tn == n ? at : at / n * tn + within);
    y.values[i] = x.values[i] * cos.values[t] + x.values[other] * sin.values[t];
  }
  return y;
}

RefTensor embedding(const Op &op, const RefTensor &table,
                    const RefTensor &ids) {
  const int64_t vocab = table.shape[0], hidden = table.shape[1];
  RefTensor y{op.result()->type().shape,
              std::vector<double>(ids.values.size() *
                                  static_cast<size_t>(hidden))};
  for (size_t i = 0; i < ids.values.size(); ++i) {
    const double id = ids.values[i];
    if (!(id >= 0 && id < static_cast<double>(vocab)) || id != std::floor(id))
      throw UserError(op.loc(),
                      "embedding '" + op.name() + "': id " +
                          std::to_string(static_cast<long long>(id)) +
                          " at index " + std::to_string(i) +
                          " is outside the vocabulary [0, " +
                          std::to_string(vocab) + ")");
    const auto row = static_cast<size_t>(id) * static_cast<size_t>(hidden);
    std::copy(table.values.begin() + static_cast<std::ptrdiff_t>(row),
              table.values.begin() +
                  static_cast<std::ptrdiff_t>(row + static_cast<size_t>(hidden)),
              y.values.begin() +
                  static_cast<std::ptrdiff_t>(i * static_cast<size_t>(hidden)));
  }
  return y;
}

/// The lowest index of the largest element of each row, NaN passed over.
RefTensor argmax(const Op &op, const RefTensor &x) {
  const auto n = static_cast<size_t>(x.shape.back());
  const size_t rows = x.values.size() / n;
  RefTensor y{op.result()->type().shape, std::vector<double>(rows)};
  for (size_t r = 0; r < rows; ++r) {
    const double *row = x.values.data() + r * n;
    size_t best = n;
    for (size_t j = 0; j < n; ++j)
      if (!std::isnan(row[j]) && (best == n || row[j] > row[best]))
        best = j;
    y.values[r] = best == n ? 0.0 : static_cast<double>(best);
  }
  return y;
}

} // namespace

RefTensor tensorFromNpy(const NpyArray &array) {
  RefTensor t{array.shape, std::vector<double>(static_cast<size_t>(array.elementCount()))};
  const char *p = array.data.data();
  for (size_t i = 0; i < t.values.size(); ++i) {
    switch (array.dtype) {
    case NpyDtype::F32: {
      float f;
      std::memcpy(&f, p + i * 4, 4);
      t.values[i] = f;
      break;
    }
    case NpyDtype::F16: {
      uint16_t h;
      std::memcpy(&h, p + i * 2, 2);
      t.values[i] = half::halfToFloat(h);
      break;
    }
    case NpyDtype::I8:
      t.values[i] = static_cast<int8_t>(p[i]);
      break;
    case NpyDtype::I32: {
      int32_t v;
      std::memcpy(&v, p + i * 4, 4);
      t.values[i] = v;
      break;
    }
    }
  }
  return t;
}

RefTensor tensorFromConstant(const ConstantData &data) {
  return {data.type().shape, data.toDoubles()};
}

NpyArray toNpyF32(const RefTensor &tensor) {
  std::vector<float> values(tensor.values.size());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(tensor.values[i]);
  return makeNpyF32(values, tensor.shape);
}

std::vector<RefTensor> evaluateOp(const Op &op,
                                  const std::vector<const RefTensor *> &operands) {
  SPYRE_ASSERT(operands.size() == op.numOperands(),
               "operand count differs for op '" + op.name() + "'");
  for (size_t i = 0; i < operands.size(); ++i)
    SPYRE_ASSERT(operands[i] && operands[i]->shape == op.operand(i)->type().shape,
                 "operand " + std::to_string(i) + " of op '" + op.name() +
                     "' does not have its value's shape");
  const RefTensor &x = *operands[0];
  auto optional = [&](size_t i) {
    return i < operands.size() ? operands[i] : nullptr;
  };
  switch (op.kind()) {
  case OpKind::Matmul:
    return {matmul(op, x, *operands[1])};
  case OpKind::GatedMatmul: {
    // The two products in double, then silu(gate) * up per element.
    RefTensor y = matmul(op, x, *operands[1]);
    const RefTensor up = matmul(op, x, *operands[2]);
    for (size_t i = 0; i < y.values.size(); ++i)
      y.values[i] = y.values[i] * sigmoid(y.values[i]) * up.values[i];
    return {y};
  }
  case OpKind::Linear:
    return {linear(op, x, *operands[1], optional(2))};
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
    return {binary(op, x, *operands[1])};
  case OpKind::Relu:
  case OpKind::Gelu:
  case OpKind::Silu:
  case OpKind::Sigmoid:
  case OpKind::Tanh:
  case OpKind::Erf:
  case OpKind::Exp:
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Reciprocal:
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Pow:
    return {unary(op, x)};
  case OpKind::Softmax:
    return {softmax(op, x)};
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
    return {normalize(op, x, optional(1), optional(2))};
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
    return {reduce(op, x)};
  case OpKind::Transpose:
    return {transpose(op, x)};
  case OpKind::Reshape:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze:
  case OpKind::Relayout:
    return {RefTensor{op.result()->type().shape, x.values}};
  case OpKind::Split:
    return split(op, x);
  case OpKind::Concat:
    return {concat(op, operands)};
  case OpKind::CausalMaskAdd:
    return {causalMaskAdd(x)};
  case OpKind::CausalSoftmax:
    return {causalSoftmax(op, x)};
  case OpKind::Attention:
    if (operands.size() == 5)
      return {attention(op, x, joinTokens(*operands[1], *operands[3]),
                        joinTokens(*operands[2], *operands[4]))};
    return {attention(op, x, *operands[1], *operands[2])};
  case OpKind::Rotary:
    return {rotary(op, x, *operands[1], *operands[2])};
  case OpKind::Embedding:
    return {embedding(op, x, *operands[1])};
  case OpKind::Argmax:
    return {argmax(op, x)};
  case OpKind::Host:
    return hostOp(op, operands);
  }
  SPYRE_UNREACHABLE("op kind without a reference implementation");
}

HostMemoryEstimate evaluationMemory(const Graph &graph, bool keepAll) {
  auto bytesOf = [](const Value *v) {
    return saturatingMul(saturatingElements(v->type().shape), sizeof(double));
  };
  HostMemoryEstimate e;
  // The caller's inputs and the evaluator's copies.
  for (const Value *v : graph.inputs())
    e.add(v->name(), saturatingMul(bytesOf(v), 2));
  for (const Value *v : graph.constants())
    e.add(v->name(), bytesOf(v));
  std::vector<Op *> ops = graph.ops();
  std::map<const Value *, size_t> lastUse;
  for (size_t i = 0; i < ops.size(); ++i)
    for (const Value *v : ops[i]->operands())
      lastUse[v] = i;
  uint64_t live = e.bytes;
  uint64_t peak = live;
  for (size_t i = 0; i < ops.size(); ++i) {
    for (const Value *v : ops[i]->results()) {
      e.note(v->name(), bytesOf(v));
      live = saturatingAdd(live, bytesOf(v));
    }
    peak = std::max(peak, live);
    if (keepAll)
      continue;
    for (const Value *v : ops[i]->operands())
      if (!v->isInput() && !v->isConstant() && lastUse[v] == i &&
          !graph.isOutput(v))
        live -= std::min(live, bytesOf(v));
  }
  e.bytes = peak;
  return e;
}

void checkEvaluationMemory(const Graph &graph, bool keepAll) {
  checkHostMemory(evaluationMemory(graph, keepAll), physicalMemoryBytes(),
                  graphLoc(graph));
}

std::vector<RefTensor> evaluateGraph(const Graph &graph, const TensorMap &inputs,
                                     TensorMap *allValues) {
  SourceLoc where = graphLoc(graph);
  checkEvaluationMemory(graph, allValues != nullptr);
  for (const auto &[name, tensor] : inputs) {
    const Value *v = graph.findValue(name);
    if (!v || !v->isInput())
      throw UserError(where, "the graph has no input named '" + name + "'");
  }
  // Values by pointer for lookup only; never iterated.
  std::map<const Value *, RefTensor> env;
  for (const Value *v : graph.inputs()) {
    auto it = inputs.find(v->name());
    if (it == inputs.end())
      throw UserError(where, "no value given for input '" + v->name() + "'");
    if (it->second.shape != v->type().shape ||
        it->second.elementCount() != v->type().elementCount())
      throw UserError(where, "input '" + v->name() + "' has shape " +
                                 shapeStr(it->second.shape) + ", expected " +
                                 shapeStr(v->type().shape));
    env[v] = it->second;
  }
  for (const Value *v : graph.constants())
    env[v] = tensorFromConstant(v->constantData());

  // The last op that reads each value, so intermediates can be dropped.
  std::vector<Op *> ops = graph.ops();
  std::map<const Value *, size_t> lastUse;
  for (size_t i = 0; i < ops.size(); ++i)
    for (const Value *v : ops[i]->operands())
      lastUse[v] = i;

  for (size_t i = 0; i < ops.size(); ++i) {
    const Op &op = *ops[i];
    std::vector<const RefTensor *> operands;
    for (const Value *v : op.operands()) {
      auto it = env.find(v);
      SPYRE_ASSERT(it != env.end(), "operand of op '" + op.name() +
                                        "' not computed: is the graph verified?");
      operands.push_back(&it->second);
    }
    std::vector<RefTensor> results = evaluateOp(op, operands);
    for (size_t r = 0; r < results.size(); ++r)
      env[op.result(r)] = std::move(results[r]);
    if (allValues)
      continue;
    for (const Value *v : op.operands())
      if (lastUse[v] == i && !graph.isOutput(v))
        env.erase(v);
  }

  if (allValues) {
    for (const Value *v : graph.inputs())
      (*allValues)[v->name()] = env.at(v);
    for (const Value *v : graph.constants())
      (*allValues)[v->name()] = env.at(v);
    for (const Op *op : ops)
      for (const Value *v : op->results())
        (*allValues)[v->name()] = env.at(v);
  }
  std::vector<RefTensor> outputs;
  for (const Value *v : graph.outputs())
    outputs.push_back(env.at(v));
  return outputs;
}

} // namespace spyre::compiler::ref
