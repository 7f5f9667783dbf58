// The attention kernel: y = softmax(q k^T * scale (+ causal mask)) v for
// grouped-query heads, the scores kept in LX (Kernels.h, AttentionArgs).
//
// Split: a group is one key/value head of one sequence and its G query
// heads. Groups are spread over the cores, `coresPerGroup` consecutive
// cores each (chosen by the estimate below), and each core runs its
// groups one after another. A group's work is its query tiles (tileRows
// rows of one query head); its cores take them balanced by the keys each
// tile sees (with the causal mask, a late tile sees many more keys than an
// early one), largest first onto the least loaded core.
//
// Per core and group (a segment), in LX:
//   K^T  [keys / 64 blocks][hd rows]   mm's B of Q K^T (sticked on keys)
//   V    [hd / 64 blocks][keys rows]   mm's B of P V (sticked on hd)
// K is loaded as stored (sticked on hd, into the score buffers, which are
// free then) and turned by the SFU units with xpose, half the key blocks
// each; V is loaded as stored. Each is read once per core and group.
//
// Per query tile, with two buffers for the query tile Q, the scores S and
// the output O (one each without overlap), each unit u taking its half of
// the tile's rows through the whole chain:
//   dma.load --Q--> pt.u: S = Q K^T (DL16, keys up to the tile's last
//   visible one) --S--> sfu.u: mask, scale, softmax in FP32, P written
//   over S in DL16 --P--> pt.u: O = P V --O--> dma.store
// The PT stream runs Q K^T of tile i + 1 before P V of tile i, so the PT
// units work while the SFU units do the softmax. The causal mask is added
// to the DL16 scores in place, one SFU instruction per tile and unit, from
// a table of sticks (stick j hides the lanes past j + dMin): row q of key
// block b reads stick q + (L - S) - 64 b - dMin, one stick on per row and
// 64 back per block. The blocks a tile's first row sees whole take no mask
// and the blocks past its last row's keys are not computed at all.
//
// Everything is straight-line code with absolute addresses (the tiles of a
// core differ in their key counts under the mask, which instruction fields
// hold), synchronised by counters, one per producer and consumer stream:
// load -> pt (Q ready), pt -> load (Q buffer free), pt -> sfu (S ready),
// sfu -> pt (P ready), pt -> store (O ready), store -> pt (O buffer free),
// and per segment load -> sfu (raw K and the mask table loaded),
// sfu -> pt (K^T ready), load -> pt (V loaded), pt -> load (the segment
// done, so the next one's K and V may be loaded).
#include "compiler/codegen/KernelSupport.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace spyre::codegen {

namespace {

constexpr int64_t kLanes = 64; ///< DL16 lanes: the granule of keys and hd
/// Query rows per tile: 64 keeps a unit's 32 rows at sqrt(4/8) of the PT
/// rate, and the diagonal of the causal mask inside one key block.
constexpr int64_t kMaxTileRows = 64;
/// SFU cycles per FP32 stick of scores and unit, summed over the softmax
/// chain at the built-in rates: cvt 1, muls 1, rmax 2, sub 1, exp 4,
/// rsum 2, mul 1, cvt back 0.5, mask 0.5 (docs/hardware.md, SFU).
constexpr double kSfuCyclesPerF32Stick = 13.0;

struct Shape {
  int64_t batch = 0, heads = 0, kvHeads = 0, group = 0;
  int64_t queries = 0, keys = 0, headDim = 0;
  int64_t hdBlocks = 0, keyBlocks = 0, keysPadded = 0, kdim = 0;
  int64_t offset = 0; ///< L - S: query i sees keys up to i + offset
};

Shape shapeOf(const AttentionArgs &a) {
  SPYRE_ASSERT(a.q.rank() == 4 && a.k.rank() == 4 && a.v.rank() == 4 &&
                   a.y.rank() == 4,
               "attention: q, k, v and y must be [B, heads, tokens, hd]");
  for (const TensorRef *t : {&a.q, &a.k, &a.v, &a.y})
    SPYRE_ASSERT(t->dtype == isa::DType::Dl16,
                 "attention: '" + t->name + "' is not DL16");
  Shape s;
  s.batch = a.q.shape[0];
  s.heads = a.q.shape[1];
  s.queries = a.q.shape[2];
  s.headDim = a.q.shape[3];
  s.kvHeads = a.k.shape[1];
  s.keys = a.k.shape[2];
  SPYRE_ASSERT(a.y.shape == a.q.shape && a.v.shape == a.k.shape &&
                   a.k.shape[0] == s.batch && a.k.shape[3] == s.headDim &&
                   s.kvHeads >= 1 && s.heads % s.kvHeads == 0,
               "attention: shapes of q, k, v and y do not agree");
  SPYRE_ASSERT(!a.causal || s.keys >= s.queries,
               "attention: a causal mask needs at least as many keys as "
               "queries");
  s.group = s.heads / s.kvHeads;
  s.hdBlocks = ceilDiv(s.headDim, kLanes);
  s.kdim = s.hdBlocks * kLanes;
  s.keyBlocks = ceilDiv(s.keys, kLanes);
  s.keysPadded = s.keyBlocks * kLanes;
  s.offset = s.keys - s.queries;
  return s;
}

/// The sticks of matrix (b, head) of a [B, heads, rows, hd] tensor: row r,
/// block c at base + r * rowStride + c * blockStride, in any layout.
struct HeadView {
  int64_t base = 0, rowStride = 0, blockStride = 0;
};

HeadView headView(const TensorRef &t, int64_t b, int64_t head) {
  return {static_cast<int64_t>(t.stickOf({b, head, 0, 0})), t.dimStride(2),
          t.blockStride()};
}

/// Per unit: a FP32 scratch for `h` rows of scores over every key block.
int64_t unitScratch(const Shape &s, int64_t h) {
  StickMatrix m;
  m.dtype = isa::DType::Dl16;
  m.cols = s.keysPadded;
  return f32Scratch(0, m, h, false, 0).end;
}

/// LX sticks of one core for tiles of t rows on `units` units with
/// `buffers` buffers, and where each region starts.
struct LxLayout {
  int64_t table = 0, kt = 0, v = 0, kraw = 0;
  std::vector<int64_t> q, o, s;
  std::vector<int64_t> scratch;
  int64_t end = 0;
};

int64_t maskTableSticks(int64_t t) {
  // d = q + offset - 64 b over a unit's rows and masked blocks lies in
  // (-t, t + 63); see dRange.
  return 2 * t + kLanes;
}

LxLayout lxLayout(const Shape &s, int64_t t, int units, int buffers,
                  bool causal, int64_t base) {
  LxLayout l;
  int64_t at = base;
  auto take = [&](int64_t n) {
    const int64_t a = at;
    at += n;
    return a;
  };
  if (causal)
    l.table = take(maskTableSticks(t));
  l.kt = take(s.keyBlocks * s.kdim);
  l.v = take(s.hdBlocks * s.keysPadded);
  for (int i = 0; i < buffers; ++i)
    l.q.push_back(take(s.hdBlocks * t));
  for (int i = 0; i < buffers; ++i)
    l.o.push_back(take(s.hdBlocks * t));
  // Raw K (as stored) lies over the score buffers and scratch: it is
  // turned into K^T before the first score of its segment is computed.
  l.kraw = at;
  for (int i = 0; i < buffers; ++i)
    l.s.push_back(take(s.keyBlocks * t));
  const int64_t sc = unitScratch(s, ceilDiv(t, units));
  for (int u = 0; u < units; ++u)
    l.scratch.push_back(take(sc));
  l.end = std::max(at, l.kraw + s.hdBlocks * s.keysPadded);
  return l;
}

/// Keys the last row of a tile [row0, row0 + rows) sees.
int64_t tileKeys(const Shape &s, bool causal, int64_t row0, int64_t rows) {
  return causal ? std::min(s.keys, row0 + rows + s.offset) : s.keys;
}

/// The lowest d = q + offset - 64 b any unit's masked block reads.
int64_t dMin(int64_t t) { return -t; }

/// Estimated cycles of the kernel with `cpg` cores per group.
int64_t estimate(const hw::HwConfig &cfg, const Shape &s, bool causal,
                 int64_t t, int cpg, int cores, int units) {
  const int64_t groups = s.batch * s.kvHeads;
  const int64_t coresUsed = std::min<int64_t>(cores, groups * cpg);
  // Bytes: q and y once, K and V once per core and group it runs.
  const double qy = 2.0 * 2 * s.batch * s.heads * s.queries * s.kdim;
  const double kv = 2.0 * 2 * s.keysPadded * s.kdim;
  const double groupsPerCore =
      static_cast<double>(ceilDiv(groups * cpg, coresUsed));
  const double bytes = qy + kv * static_cast<double>(coresUsed) * groupsPerCore;
  const double bw = cfg.memory.sustainedReadGBps / cfg.chip.clockGhz;
  const double memory = bytes / bw;
  // Compute of the busiest core: its share of a group's scores.
  double scores = 0;
  for (int64_t r0 = 0; r0 < s.queries; r0 += t) {
    const int64_t rows = std::min(t, s.queries - r0);
    scores += static_cast<double>(rows) *
              static_cast<double>(ceilDiv(tileKeys(s, causal, r0, rows),
                                          kLanes) *
                                  kLanes);
  }
  scores *= static_cast<double>(s.group) * groupsPerCore / cpg;
  const double passes = std::max<double>(
      1.0, static_cast<double>(ceilDiv(ceilDiv(t, units), cfg.pt.passRows)));
  const double rate =
      std::min(1.0, std::sqrt(passes / cfg.pt.fullRatePasses));
  const double pt = 2.0 * scores * static_cast<double>(s.kdim) /
                    (static_cast<double>(cfg.ptMacsPerCycle()) * units * rate);
  const double sfu = scores / 32.0 * kSfuCyclesPerF32Stick / units;
  return static_cast<int64_t>(std::ceil(std::max(memory, std::max(pt, sfu))));
}

/// The tiles of one group (query head, rows), balanced over `cpg` cores:
/// largest first onto the least loaded core; each core's tiles in order.
std::vector<std::vector<AttentionPlan::Tile>>
balanceGroup(const Shape &s, bool causal, int64_t t, int64_t group, int cpg) {
  std::vector<AttentionPlan::Tile> tiles;
  const int64_t j = group % s.kvHeads;
  for (int64_t g = 0; g < s.group; ++g)
    for (int64_t r0 = 0; r0 < s.queries; r0 += t) {
      const int64_t rows = std::min(t, s.queries - r0);
      tiles.push_back(
          {group, j * s.group + g, r0, rows, tileKeys(s, causal, r0, rows)});
    }
  auto cost = [](const AttentionPlan::Tile &x) {
    return x.rows * ceilDiv(x.keys, kLanes);
  };
  std::vector<size_t> order(tiles.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return cost(tiles[a]) > cost(tiles[b]);
  });
  std::vector<int64_t> load(static_cast<size_t>(cpg), 0);
  std::vector<std::vector<size_t>> mine(static_cast<size_t>(cpg));
  for (size_t i : order) {
    const size_t c = static_cast<size_t>(
        std::min_element(load.begin(), load.end()) - load.begin());
    load[c] += cost(tiles[i]);
    mine[c].push_back(i);
  }
  std::vector<std::vector<AttentionPlan::Tile>> out;
  for (std::vector<size_t> &m : mine) {
    std::sort(m.begin(), m.end());
    std::vector<AttentionPlan::Tile> part;
    for (size_t i : m)
      part.push_back(tiles[i]);
    out.push_back(std::move(part));
  }
  return out;
}

/// Per-pair counters of one core: counter(from, to) is where `from`
/// signals `to`.
class Counters {
public:
  Counters(ProgramBuilder &pb, int core) : pb_(pb), core_(core) {}
  int get(const StreamBuilder *from, const StreamBuilder *to, int kind) {
    const auto key = std::make_tuple(from, to, kind);
    auto it = map_.find(key);
    if (it != map_.end())
      return it->second;
    const int c = pb_.allocCounter(core_);
    order_.push_back(c);
    map_[key] = c;
    return c;
  }
  void post(StreamBuilder &from, StreamBuilder &to, int kind) {
    from.signal(get(&from, &to, kind), 1);
  }
  void await(StreamBuilder &from, StreamBuilder &to, int kind) {
    to.wait(get(&from, &to, kind), 1);
  }
  void release() {
    for (int c : order_)
      pb_.releaseCounter(core_, c);
  }

private:
  ProgramBuilder &pb_;
  int core_;
  std::map<std::tuple<const StreamBuilder *, const StreamBuilder *, int>, int>
      map_;
  std::vector<int> order_; ///< in allocation order, never by pointer
};

enum Token {
  QReady,
  QFree,
  SReady,
  PReady,
  OReady,
  OFree,
  KRawReady,
  KtReady,
  VReady,
  SegmentDone
};

class AttentionCore {
public:
  AttentionCore(ProgramBuilder &pb, const AttentionArgs &args, const Shape &s,
                const Resources &res, int64_t t, int core,
                const std::vector<AttentionPlan::Tile> &tiles,
                std::optional<int64_t> table)
      : pb_(pb), a_(args), s_(s), t_(t), core_(core), tiles_(tiles),
        tableAddr_(table), tok_(pb, core),
        lx_(lxLayout(s, t, res.units, res.buffers, args.causal, res.lxBase)),
        units_(res.units), buffers_(res.buffers) {
    load_ = &pb.stream(core, isa::Engine::DmaLoad);
    store_ = &pb.stream(core, isa::Engine::DmaStore);
    for (int u = 0; u < units_; ++u) {
      pt_.push_back(&pb.stream(core, isa::Engine::Pt, u));
      sfu_.push_back(&pb.stream(core, isa::Engine::Sfu, u));
    }
  }

  void emit() {
    pb_.noteLxUse(core_, lx_.end);
    // Segments: runs of tiles of one group.
    std::vector<std::pair<size_t, size_t>> segments;
    for (size_t i = 0; i < tiles_.size(); ++i)
      if (i == 0 || tiles_[i].group != tiles_[i - 1].group)
        segments.push_back({i, i + 1});
      else
        segments.back().second = i + 1;
    for (size_t g = 0; g < segments.size(); ++g)
      emitLoads(segments[g].first, segments[g].second, g == 0);
    for (size_t g = 0; g < segments.size(); ++g)
      emitSfu(segments[g].first, segments[g].second);
    for (size_t g = 0; g < segments.size(); ++g)
      emitPt(segments[g].first, segments[g].second,
             g + 1 < segments.size());
    emitStores();
    tok_.release();
  }

private:
  int64_t bufIndex(size_t i) const {
    return static_cast<int64_t>(i % static_cast<size_t>(buffers_));
  }
  /// Rows [r0, r1) of tile i for unit u: the same buffer rows in every
  /// tile (a short last tile leaves the later units less or nothing), so a
  /// unit only ever touches its own rows of the S and O buffers.
  std::pair<int64_t, int64_t> unitRows(size_t i, int u) const {
    const int64_t rows = tiles_[i].rows;
    return {std::min(rows, u * t_ / units_),
            std::min(rows, (u + 1) * t_ / units_)};
  }
  int64_t keyBlocks(size_t i) const {
    return ceilDiv(tiles_[i].keys, kLanes);
  }

  void emitLoads(size_t first, size_t end, bool firstSegment) {
    StreamBuilder &ld = *load_;
    const int64_t group = tiles_[first].group;
    const int64_t b = group / s_.kvHeads, j = group % s_.kvHeads;
    if (!firstSegment)
      for (StreamBuilder *p : pt_)
        tok_.await(*p, ld, SegmentDone);
    if (firstSegment && tableAddr_)
      ld.append(loadSticks(at(lx_.table), at(*tableAddr_),
                           {maskTableSticks(t_), 1, 1, 0, 0}));
    const HeadView k = headView(a_.k, b, j), v = headView(a_.v, b, j);
    ld.append(loadSticks(at(lx_.kraw), at(k.base),
                         {s_.keys, s_.hdBlocks, k.rowStride, k.blockStride,
                          s_.keysPadded}));
    for (StreamBuilder *f : sfu_)
      tok_.post(ld, *f, KRawReady);
    ld.append(loadSticks(at(lx_.v), at(v.base),
                         {s_.keys, s_.hdBlocks, v.rowStride, v.blockStride,
                          s_.keysPadded}));
    // Rows past L are read by P V (times zero probabilities): zero them
    // once; later segments load rows below L only.
    if (firstSegment && s_.keysPadded > s_.keys)
      for (int64_t c = 0; c < s_.hdBlocks; ++c)
        ld.append(loadSticks(
            at(lx_.v + c * s_.keysPadded + s_.keys),
            at(static_cast<int64_t>(pb_.zeroSticks(s_.keysPadded - s_.keys))),
            {s_.keysPadded - s_.keys, 1, 1, 0, 0}));
    for (StreamBuilder *p : pt_)
      tok_.post(ld, *p, VReady);
    for (size_t i = first; i < end; ++i) {
      if (i >= static_cast<size_t>(buffers_))
        for (StreamBuilder *p : pt_)
          tok_.await(*p, ld, QFree);
      const AttentionPlan::Tile &tl = tiles_[i];
      const HeadView q = headView(a_.q, b, tl.head);
      ld.append(loadSticks(at(lx_.q[static_cast<size_t>(bufIndex(i))]),
                           at(q.base + tl.row0 * q.rowStride),
                           {tl.rows, s_.hdBlocks, q.rowStride, q.blockStride,
                            t_}));
      for (StreamBuilder *p : pt_)
        tok_.post(ld, *p, QReady);
    }
  }

  void emitSfu(size_t first, size_t end) {
    for (int u = 0; u < units_; ++u) {
      StreamBuilder &f = *sfu_[static_cast<size_t>(u)];
      tok_.await(*load_, f, KRawReady);
      // K^T: key block kb, hd block c is an xpose of 64 keys x 64 lanes.
      const int64_t n = s_.keyBlocks * s_.hdBlocks;
      for (int64_t x = u * n / units_; x < (u + 1) * n / units_; ++x) {
        const int64_t kb = x / s_.hdBlocks, c = x % s_.hdBlocks;
        f.append(instr<isa::Opcode::Xpose>()
                     .dst(at(lx_.kt + kb * s_.kdim + c * kLanes))
                     .src(at(lx_.kraw + c * s_.keysPadded + kb * kLanes))
                     .m(std::min(kLanes, s_.keys - kb * kLanes))
                     .k(kLanes));
      }
      for (StreamBuilder *p : pt_)
        tok_.post(f, *p, KtReady);
      for (size_t i = first; i < end; ++i) {
        StreamBuilder &p = *pt_[static_cast<size_t>(u)];
        tok_.await(p, f, SReady);
        softmax(f, i, u);
        tok_.post(f, p, PReady);
      }
    }
  }

  /// Mask, scale and softmax of unit u's rows of tile i, P over S.
  void softmax(StreamBuilder &f, size_t i, int u) {
    const auto [r0, r1] = unitRows(i, u);
    const int64_t h = r1 - r0;
    if (h == 0)
      return;
    const AttentionPlan::Tile &tl = tiles_[i];
    const int64_t nkb = keyBlocks(i);
    const Addr sb = at(lx_.s[static_cast<size_t>(bufIndex(i))] + r0);
    if (a_.causal) {
      const int64_t q0 = tl.row0 + r0;
      const int64_t fb = std::min(nkb, (q0 + s_.offset + 1) / kLanes);
      if (fb < nkb)
        f.append(sfuBinary(
            isa::Opcode::Add, sb + fb * t_, sb + fb * t_,
            at(lx_.table + q0 + s_.offset - kLanes * fb - dMin(t_)),
            {h, nkb - fb, t_, t_, -kLanes, 0}, false, false));
    }
    StickMatrix xm;
    xm.dtype = isa::DType::Dl16;
    xm.cols = tl.keys;
    const F32Scratch sc = f32Scratch(
        lx_.scratch[static_cast<size_t>(u)], xm, ceilDiv(t_, units_), false, 0);
    F32Rows r(f, xm, h);
    const Addr xf = at(sc.xf), stat = at(sc.stat), stat2 = at(sc.stat2);
    r.load(xf, sb, t_);
    if (a_.scale != 1.0f)
      f.append(sfuScalar(isa::Opcode::Muls, xf, xf, a_.scale,
                         {r.f, r.nb * r.h, r.f, r.f, 0, 0}, true));
    r.reduce(isa::Opcode::Rmax, stat, xf, at(sc.partial));
    r.rowStat(isa::Opcode::Sub, xf, xf, stat, r.spread(at(sc.spread), stat));
    r.map(isa::Opcode::Exp, xf, xf);
    r.reduce(isa::Opcode::Rsum, stat, xf, at(sc.partial));
    r.statUnary(isa::Opcode::Recip, stat2, stat);
    r.rowStat(isa::Opcode::Mul, xf, xf, stat2, r.spread(at(sc.spread), stat2));
    r.store(sb, xf, t_);
  }

  void emitPt(size_t first, size_t end, bool moreSegments) {
    for (int u = 0; u < units_; ++u) {
      StreamBuilder &p = *pt_[static_cast<size_t>(u)];
      for (StreamBuilder *f : sfu_)
        tok_.await(*f, p, KtReady);
      tok_.await(*load_, p, VReady);
      // With two score buffers, Q K^T of tile i runs before P V of tile
      // i - 1; with one, each tile's P V comes first.
      const bool ahead = buffers_ > 1;
      for (size_t i = first; i < end; ++i) {
        scores(p, i, u);
        if (!ahead)
          context(p, i, u);
        else if (i > first)
          context(p, i - 1, u);
      }
      if (ahead)
        context(p, end - 1, u);
      if (moreSegments)
        tok_.post(p, *load_, SegmentDone);
    }
  }

  /// S = Q K^T for unit u's rows of tile i.
  void scores(StreamBuilder &p, size_t i, int u) {
    tok_.await(*load_, p, QReady);
    const auto [r0, r1] = unitRows(i, u);
    const int64_t bi = bufIndex(i);
    if (r1 > r0)
      p.append(instr<isa::Opcode::Mm>()
                   .c(at(lx_.s[static_cast<size_t>(bi)] + r0))
                   .a(at(lx_.q[static_cast<size_t>(bi)] + r0))
                   .b(at(lx_.kt))
                   .m(r1 - r0)
                   .k(s_.kdim)
                   .n(keyBlocks(i) * kLanes)
                   .as(t_)
                   .bs(s_.kdim)
                   .cs(t_)
                   .out(isa::StickFormat::Dl16));
    if (i + static_cast<size_t>(buffers_) < tiles_.size())
      tok_.post(p, *load_, QFree);
    tok_.post(p, *sfu_[static_cast<size_t>(u)], SReady);
  }

  /// O = P V for unit u's rows of tile i.
  void context(StreamBuilder &p, size_t i, int u) {
    tok_.await(*sfu_[static_cast<size_t>(u)], p, PReady);
    if (i >= static_cast<size_t>(buffers_))
      tok_.await(*store_, p, OFree);
    const auto [r0, r1] = unitRows(i, u);
    const int64_t bi = bufIndex(i);
    if (r1 > r0)
      p.append(instr<isa::Opcode::Mm>()
                   .c(at(lx_.o[static_cast<size_t>(bi)] + r0))
                   .a(at(lx_.s[static_cast<size_t>(bi)] + r0))
                   .b(at(lx_.v))
                   .m(r1 - r0)
                   .k(keyBlocks(i) * kLanes)
                   .n(s_.kdim)
                   .as(t_)
                   .bs(s_.keysPadded)
                   .cs(t_)
                   .out(isa::StickFormat::Dl16));
    tok_.post(p, *store_, OReady);
  }

  void emitStores() {
    StreamBuilder &st = *store_;
    for (size_t i = 0; i < tiles_.size(); ++i) {
      for (StreamBuilder *p : pt_)
        tok_.await(*p, st, OReady);
      const AttentionPlan::Tile &tl = tiles_[i];
      const HeadView y = headView(a_.y, tl.group / s_.kvHeads, tl.head);
      st.append(storeSticks(at(y.base + tl.row0 * y.rowStride),
                            at(lx_.o[static_cast<size_t>(bufIndex(i))]),
                            {tl.rows, s_.hdBlocks, y.rowStride, y.blockStride,
                             t_}));
      if (i + static_cast<size_t>(buffers_) < tiles_.size())
        for (StreamBuilder *p : pt_)
          tok_.post(st, *p, OFree);
    }
  }

  ProgramBuilder &pb_;
  const AttentionArgs &a_;
  const Shape &s_;
  int64_t t_;
  int core_;
  const std::vector<AttentionPlan::Tile> &tiles_;
  std::optional<int64_t> tableAddr_;
  Counters tok_;
  LxLayout lx_;
  int units_, buffers_;
  StreamBuilder *load_ = nullptr, *store_ = nullptr;
  std::vector<StreamBuilder *> pt_, sfu_;
};

} // namespace

std::string AttentionPlan::str() const {
  std::string out;
  for (const Part &p : parts) {
    int64_t scores = 0;
    for (const Tile &t : p.tiles)
      scores += t.rows * t.keys;
    std::string groups;
    for (size_t i = 0; i < p.tiles.size(); ++i)
      if (i == 0 || p.tiles[i].group != p.tiles[i - 1].group)
        groups += (groups.empty() ? "" : ", ") +
                  std::to_string(p.tiles[i].group);
    out += "core " + std::to_string(p.core) + ": " +
           std::to_string(p.tiles.size()) + " tiles of " +
           std::to_string(tileRows) + " rows in group" +
           (groups.find(',') == std::string::npos ? " " : "s ") + groups +
           ", " + std::to_string(scores) + " scores\n";
  }
  return out;
}

AttentionPlan planAttention(const hw::HwConfig &config,
                            const AttentionArgs &args,
                            const KernelOptions &opt) {
  const Shape s = shapeOf(args);
  const Resources res = resources(config, opt);
  AttentionPlan plan;
  // The largest tile up to 64 rows whose working set fits.
  int64_t t = std::min(kMaxTileRows, s.queries);
  while (t >= 1 && lxLayout(s, t, res.units, res.buffers, args.causal,
                            res.lxBase)
                           .end > res.lxEnd)
    t /= 2;
  if (t < 1) {
    plan.error = "the keys and values of one head (" +
                 std::to_string(s.keys) + " x " + std::to_string(s.headDim) +
                 ") do not fit the LX region of " +
                 std::to_string(res.lxSticks()) + " sticks";
    return plan;
  }
  plan.tileRows = t;
  plan.lxSticks =
      lxLayout(s, t, res.units, res.buffers, args.causal, res.lxBase).end -
      res.lxBase;
  const int64_t groups = s.batch * s.kvHeads;
  const int64_t tilesPerGroup = s.group * ceilDiv(s.queries, t);
  const int maxCpg = static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>(res.cores / std::min<int64_t>(groups, res.cores),
                           tilesPerGroup)));
  int best = 1;
  int64_t bestCycles = 0;
  for (int cpg = 1; cpg <= maxCpg; ++cpg) {
    const int64_t c =
        estimate(config, s, args.causal, t, cpg, res.cores, res.units);
    if (cpg == 1 || c < bestCycles) {
      best = cpg;
      bestCycles = c;
    }
  }
  plan.coresPerGroup = best;
  plan.estimatedCycles = bestCycles;
  // Group gi on cores (gi * cpg .. + cpg) mod the cores used.
  const int64_t slots = std::min<int64_t>(res.cores / best, groups) * best;
  std::vector<std::vector<AttentionPlan::Tile>> perCore(
      static_cast<size_t>(slots));
  for (int64_t gi = 0; gi < groups; ++gi) {
    const int64_t c0 = gi * best % slots;
    std::vector<std::vector<AttentionPlan::Tile>> parts =
        balanceGroup(s, args.causal, t, gi, best);
    for (int c = 0; c < best; ++c)
      for (const AttentionPlan::Tile &tl : parts[static_cast<size_t>(c)])
        perCore[static_cast<size_t>(c0 + c)].push_back(tl);
  }
  for (int64_t c = 0; c < slots; ++c)
    if (!perCore[static_cast<size_t>(c)].empty())
      plan.parts.push_back({res.firstCore + static_cast<int>(c),
                            std::move(perCore[static_cast<size_t>(c)])});
  return plan;
}

AttentionPlan emitAttention(ProgramBuilder &pb, const AttentionArgs &args,
                            const KernelOptions &opt) {
  SPYRE_ASSERT(args.scale > 0.0f && std::isfinite(args.scale),
               "attention: the scale must be finite and positive");
  AttentionPlan plan = planAttention(pb.config(), args, opt);
  if (!plan.error.empty())
    return plan;
  const Shape s = shapeOf(args);
  const Resources res = resources(pb.config(), opt);
  pb.setOp(opt.op.empty() ? std::string("attention") : opt.op);
  std::optional<int64_t> table;
  if (args.causal) {
    // Stick j hides the lanes past j + dMin.
    const int64_t t = plan.tileRows, sticks = maskTableSticks(t);
    std::vector<float> values(static_cast<size_t>(sticks * kLanes), 0.0f);
    for (int64_t j = 0; j < sticks; ++j)
      for (int64_t l = 0; l < kLanes; ++l)
        if (l > j + dMin(t))
          values[static_cast<size_t>(j * kLanes + l)] = kMaskValue;
    const std::string name = (opt.op.empty() ? args.y.name : opt.op) + ".mask";
    table = static_cast<int64_t>(
        pb.addConst(name, isa::DType::Dl16, {sticks, kLanes}, values).address);
  }
  for (const AttentionPlan::Part &p : plan.parts)
    AttentionCore(pb, args, s, res, plan.tileRows, p.core, p.tiles, table)
        .emit();
  return plan;
}

} // namespace spyre::codegen
