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
// Keys in chunks: when one head's K^T and V do not fit LX beside the
// tiles (more than about 2048 keys of 128), they are taken `chunkKeys` at
// a time (a multiple of 64). A group's tiles then run once per chunk whose
// keys they see, with the chunk's K^T and V in LX, as above; a tile's first
// chunk writes its result to y and keeps each row's maximum m and sum l of
// exponentials in LX; each later chunk's result O_c (softmax over the
// chunk's keys alone, with its own m_c and l_c) is merged on the SFU units
// with the result so far, loaded back from y:
//   M = max(m, m_c), a = l exp(m - M), b = l_c exp(m_c - M),
//   O = (a O + b O_c) / (a + b), m = M, l = a + b,
// and stored over it. A row that sees none of a chunk's keys gets weight
// exp(-2^24) = 0 from it. K and V are still read once per core and group;
// the price is the query tile read, and the result read and written, once
// more per further chunk.
//
// Everything is straight-line code with absolute addresses (the tiles of a
// core differ in their key counts under the mask, which instruction fields
// hold), synchronised by counters, one per producer and consumer stream:
// load -> pt (Q ready), pt -> load (Q buffer free), pt -> sfu (S ready),
// sfu -> pt (P ready), pt -> store (O ready), store -> pt (O buffer free),
// and per segment load -> sfu (raw K and the mask table loaded),
// sfu -> pt (K^T ready), load -> pt (V loaded), pt -> load (the segment
// done, so the next one's K and V may be loaded). A merge adds pt -> sfu
// (O_c ready), load -> sfu (the result so far loaded), sfu -> load (its
// buffer free), sfu -> store (the merged result ready) and store -> load
// (a tile's result so far is in y). A segment is then a run of one
// group's tiles over one chunk. The merge's scratch lies below raw K: the
// next segment's K may be loaded while the last merges run.
#include "compiler/codegen/KernelSupport.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <climits>
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
/// SFU cycles per FP32 stick of a merged result and unit: two cvt, two
/// muls, an add and a cvt back, with the statistics' few sticks per row.
constexpr double kSfuMergeCyclesPerF32Stick = 6.0;

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
  SPYRE_ASSERT(a.kMore.has_value() == a.vMore.has_value(),
               "attention: more keys come with their values");
  if (a.kMore) {
    SPYRE_ASSERT(a.kMore->rank() == 4 && a.vMore->shape == a.kMore->shape &&
                     a.kMore->shape[0] == a.k.shape[0] &&
                     a.kMore->shape[1] == a.k.shape[1] &&
                     a.kMore->shape[3] == a.k.shape[3] &&
                     a.kMore->dtype == isa::DType::Dl16 &&
                     a.vMore->dtype == isa::DType::Dl16,
                 "attention: the more keys and values do not agree with k");
    s.keys += a.kMore->shape[2];
  }
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

/// How a core takes the keys: `keys` at a time (a multiple of 64; all of
/// them, padded, when not in chunks), with the row statistics of up to
/// `statTiles` tiles of one group kept in LX between chunks.
struct Chunking {
  int64_t keys = 0;
  int64_t statTiles = 0;
  bool chunked(const Shape &s) const { return keys < s.keysPadded; }
  int64_t blocks() const { return keys / kLanes; }
};

/// Keys of chunk c (of `ck` keys) that a tile seeing `seen` keys sees;
/// zero or less when it sees none.
int64_t keysInChunk(int64_t seen, int64_t ck, int64_t c) {
  return std::min(seen, (c + 1) * ck) - c * ck;
}

/// Per unit: a FP32 scratch for `h` rows of scores over `keys` keys.
int64_t unitScratch(int64_t keys, int64_t h) {
  StickMatrix m;
  m.dtype = isa::DType::Dl16;
  m.cols = keys;
  return f32Scratch(0, m, h, false, 0).end;
}

/// Per unit, for the merge of `h` rows: the result so far and the chunk's
/// in FP32 ([block][row][2]), the chunk's row maximum and sum, three more
/// statistics and a spread one ([row][2]), each stick per row.
struct MergeScratch {
  int64_t prev = 0, cur = 0, mc = 0, lc = 0, mn = 0, wa = 0, wb = 0, spread = 0,
          end = 0;
};

MergeScratch mergeScratch(const Shape &s, int64_t base, int64_t h) {
  MergeScratch m;
  LxArena a(base, INT64_MAX, "attention");
  m.prev = a.take(s.hdBlocks * 2 * h);
  m.cur = a.take(s.hdBlocks * 2 * h);
  m.mc = a.take(h);
  m.lc = a.take(h);
  m.mn = a.take(h);
  m.wa = a.take(h);
  m.wb = a.take(h);
  m.spread = a.take(2 * h);
  m.end = a.next();
  return m;
}

/// LX sticks of one core for tiles of t rows on `units` units with
/// `buffers` buffers, and where each region starts.
struct LxLayout {
  int64_t table = 0, kt = 0, v = 0, kraw = 0, stats = 0;
  std::vector<int64_t> q, o, prev, s;
  std::vector<int64_t> scratch, merge; ///< per unit
  int64_t end = 0;
};

int64_t maskTableSticks(int64_t t) {
  // d = q + offset - 64 b over a unit's rows and masked blocks lies in
  // (-t, t + 63); see dRange.
  return 2 * t + kLanes;
}

LxLayout lxLayout(const Shape &s, const Chunking &ch, int64_t t, int units,
                  int buffers, bool causal, int64_t base) {
  LxLayout l;
  LxArena a(base, INT64_MAX, "attention");
  auto take = [&](int64_t n) { return a.take(n); };
  if (causal)
    l.table = take(maskTableSticks(t));
  l.kt = take(ch.blocks() * s.kdim);
  l.v = take(s.hdBlocks * ch.keys);
  for (int i = 0; i < buffers; ++i)
    l.q.push_back(take(s.hdBlocks * t));
  for (int i = 0; i < buffers; ++i)
    l.o.push_back(take(s.hdBlocks * t));
  const int64_t h = ceilDiv(t, units);
  if (ch.chunked(s)) {
    for (int i = 0; i < buffers; ++i)
      l.prev.push_back(take(s.hdBlocks * t));
    // Per tile: each row's maximum, then each row's sum.
    l.stats = take(ch.statTiles * 2 * t);
    for (int u = 0; u < units; ++u)
      l.merge.push_back(take(mergeScratch(s, 0, h).end));
  }
  // Raw K (as stored) lies over the score buffers and scratch: it is
  // turned into K^T before the first score of its segment is computed.
  l.kraw = a.next();
  for (int i = 0; i < buffers; ++i)
    l.s.push_back(take(ch.blocks() * t));
  const int64_t sc = unitScratch(ch.keys, h);
  for (int u = 0; u < units; ++u)
    l.scratch.push_back(take(sc));
  l.end = std::max(a.next(), l.kraw + s.hdBlocks * ch.keys);
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
                 int64_t t, int64_t ck, int cpg, int cores, int units) {
  const int64_t groups = s.batch * s.kvHeads;
  const int64_t coresUsed = std::min<int64_t>(cores, groups * cpg);
  // Bytes: q and y once, K and V once per core and group it runs, and per
  // further chunk a tile sees, its queries read and its result read and
  // written once more.
  const double qy = 2.0 * 2 * s.batch * s.heads * s.queries * s.kdim;
  const double kv = 2.0 * 2 * s.keysPadded * s.kdim;
  const double groupsPerCore =
      static_cast<double>(ceilDiv(groups * cpg, coresUsed));
  // Per query head: scores (rows x keys, by whole key blocks per chunk)
  // and rows merged.
  double scores = 0, merged = 0;
  for (int64_t r0 = 0; r0 < s.queries; r0 += t) {
    const int64_t rows = std::min(t, s.queries - r0);
    const int64_t seen = tileKeys(s, causal, r0, rows);
    for (int64_t c = 0; c * ck < seen; ++c) {
      scores += static_cast<double>(rows) *
                static_cast<double>(ceilDiv(keysInChunk(seen, ck, c), kLanes) *
                                    kLanes);
      if (c > 0)
        merged += static_cast<double>(rows);
    }
  }
  const double extra = 3.0 * 2 * merged * static_cast<double>(s.kdim) *
                       static_cast<double>(s.batch * s.heads);
  const double bytes =
      qy + extra + kv * static_cast<double>(coresUsed) * groupsPerCore;
  const double bw = cfg.memory.sustainedReadGBps / cfg.chip.clockGhz;
  const double memory = bytes / bw;
  // Compute of the busiest core: its share of a group's scores.
  const double share = static_cast<double>(s.group) * groupsPerCore / cpg;
  const double passes = std::max<double>(
      1.0, static_cast<double>(ceilDiv(ceilDiv(t, units), cfg.pt.passRows)));
  const double rate =
      std::min(1.0, std::sqrt(passes / cfg.pt.fullRatePasses));
  const double pt = 2.0 * scores * share * static_cast<double>(s.kdim) /
                    (static_cast<double>(cfg.ptMacsPerCycle()) * units * rate);
  const double sfu = (scores / 32.0 * kSfuCyclesPerF32Stick +
                      merged * static_cast<double>(2 * s.hdBlocks) *
                          kSfuMergeCyclesPerF32Stick) *
                     share / units;
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

/// Every core's tiles with `cpg` cores per group: group gi on cores
/// (gi * cpg .. + cpg) mod the cores used.
std::vector<AttentionPlan::Part> assignTiles(const Shape &s, bool causal,
                                             int64_t t, int cpg,
                                             const Resources &res) {
  const int64_t groups = s.batch * s.kvHeads;
  const int64_t slots = std::min<int64_t>(res.cores / cpg, groups) * cpg;
  std::vector<std::vector<AttentionPlan::Tile>> perCore(
      static_cast<size_t>(slots));
  for (int64_t gi = 0; gi < groups; ++gi) {
    const int64_t c0 = gi * cpg % slots;
    std::vector<std::vector<AttentionPlan::Tile>> parts =
        balanceGroup(s, causal, t, gi, cpg);
    for (int c = 0; c < cpg; ++c)
      for (const AttentionPlan::Tile &tl : parts[static_cast<size_t>(c)])
        perCore[static_cast<size_t>(c0 + c)].push_back(tl);
  }
  std::vector<AttentionPlan::Part> out;
  for (int64_t c = 0; c < slots; ++c)
    if (!perCore[static_cast<size_t>(c)].empty())
      out.push_back({res.firstCore + static_cast<int>(c),
                     std::move(perCore[static_cast<size_t>(c)])});
  return out;
}

/// Tiles of one group on a core that see keys past the first chunk of
/// `ck`: the most of any group is how many keep statistics in LX.
int64_t statTilesOf(const std::vector<AttentionPlan::Tile> &tiles, int64_t ck) {
  int64_t most = 0, run = 0;
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (i > 0 && tiles[i].group != tiles[i - 1].group)
      run = 0;
    if (tiles[i].keys > ck)
      most = std::max(most, ++run);
  }
  return most;
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
  SegmentDone,
  CtxReady,  ///< pt -> sfu: a chunk's O_c, to merge
  PrevReady, ///< load -> sfu: the result so far
  PrevFree,  ///< sfu -> load: its buffer
  Merged,    ///< sfu -> store: the merged result
  YStored    ///< store -> load: a tile's result so far is in y
};

/// One tile over one chunk of keys.
struct Item {
  size_t tile = 0;
  int64_t chunk = 0;
  int64_t keys = 0;   ///< of the chunk, seen by the tile's last row
  bool first = true;  ///< the tile's first chunk: nothing to merge with
  bool more = false;  ///< a later chunk follows: keep the row statistics
  int64_t slot = 0;   ///< the tile's statistics in LX (with `more`)
  int64_t merge = -1; ///< the index among merged items (not `first`)
};

class AttentionCore {
public:
  AttentionCore(ProgramBuilder &pb, const AttentionArgs &args, const Shape &s,
                const Resources &res, int64_t t, int64_t ck, int core,
                const std::vector<AttentionPlan::Tile> &tiles,
                std::optional<int64_t> table)
      : pb_(pb), a_(args), s_(s), t_(t), core_(core), tiles_(tiles),
        tableAddr_(table), tok_(pb, core), ch_{ck, statTilesOf(tiles, ck)},
        lx_(lxLayout(s, ch_, t, res.units, res.buffers, args.causal,
                     res.lxBase)),
        units_(res.units), buffers_(res.buffers) {
    load_ = &pb.stream(core, isa::Engine::DmaLoad);
    store_ = &pb.stream(core, isa::Engine::DmaStore);
    for (int u = 0; u < units_; ++u) {
      pt_.push_back(&pb.stream(core, isa::Engine::Pt, u));
      sfu_.push_back(&pb.stream(core, isa::Engine::Sfu, u));
    }
    // Per group (a run of tiles), per chunk, the tiles that see its keys.
    for (size_t g0 = 0; g0 < tiles_.size();) {
      size_t g1 = g0 + 1;
      while (g1 < tiles_.size() && tiles_[g1].group == tiles_[g0].group)
        ++g1;
      std::vector<int64_t> slot(g1 - g0, 0);
      int64_t slots = 0;
      for (size_t i = g0; i < g1; ++i)
        if (tiles_[i].keys > ck)
          slot[i - g0] = slots++;
      for (int64_t c = 0; c * ck < s_.keys; ++c) {
        const size_t before = items_.size();
        for (size_t i = g0; i < g1; ++i) {
          const int64_t k = keysInChunk(tiles_[i].keys, ck, c);
          if (k <= 0)
            continue;
          Item it;
          it.tile = i;
          it.chunk = c;
          it.keys = k;
          it.first = c == 0;
          it.more = tiles_[i].keys > (c + 1) * ck;
          it.slot = slot[i - g0];
          if (!it.first)
            it.merge = merges_++;
          items_.push_back(it);
        }
        if (items_.size() > before)
          segments_.push_back({before, items_.size()});
      }
      g0 = g1;
    }
  }

  void emit() {
    pb_.noteLxUse(core_, lx_.end);
    for (size_t g = 0; g < segments_.size(); ++g)
      emitLoads(segments_[g].first, segments_[g].second, g == 0);
    for (size_t g = 0; g < segments_.size(); ++g)
      emitSfu(segments_[g].first, segments_[g].second);
    for (size_t g = 0; g < segments_.size(); ++g)
      emitPt(segments_[g].first, segments_[g].second, g + 1 < segments_.size());
    emitStores();
    tok_.release();
  }

private:
  int64_t bufIndex(size_t j) const {
    return static_cast<int64_t>(j % static_cast<size_t>(buffers_));
  }
  const AttentionPlan::Tile &tileOf(size_t j) const {
    return tiles_[items_[j].tile];
  }
  /// Rows [r0, r1) of item j for unit u: the same buffer rows in every
  /// tile (a short last tile leaves the later units less or nothing), so a
  /// unit only ever touches its own rows of the S and O buffers.
  std::pair<int64_t, int64_t> unitRows(size_t j, int u) const {
    const int64_t rows = tileOf(j).rows;
    return {std::min(rows, u * t_ / units_),
            std::min(rows, (u + 1) * t_ / units_)};
  }
  int64_t keyBlocks(size_t j) const { return ceilDiv(items_[j].keys, kLanes); }
  /// Row r0's maximum (its sum `t` sticks on) of item j's tile, in LX.
  int64_t statsOf(size_t j, int64_t r0) const {
    return lx_.stats + items_[j].slot * 2 * t_ + r0;
  }

  /// Rows [k0, k0 + n) of the keys (values: `values`) of group (b, j)
  /// into LX at `lx` (rows contiguous, blocks ch_.keys apart), from k (v)
  /// and the more keys after them, each where it lies.
  void loadRows(StreamBuilder &ld, int64_t lx, bool values, int64_t b,
                int64_t j, int64_t k0, int64_t n) {
    const TensorRef &first = values ? a_.v : a_.k;
    const int64_t split = first.shape[2];
    auto part = [&](const TensorRef &t, int64_t from, int64_t rows,
                    int64_t row0) {
      if (rows <= 0)
        return;
      const HeadView h = headView(t, b, j);
      ld.append(loadSticks(
          at(lx + row0), at(h.base + from * h.rowStride),
          {rows, s_.hdBlocks, h.rowStride, h.blockStride, ch_.keys}));
    };
    const int64_t inFirst = std::clamp(split - k0, int64_t{0}, n);
    part(first, k0, inFirst, 0);
    if (inFirst < n)
      part(values ? *a_.vMore : *a_.kMore, k0 + inFirst - split, n - inFirst,
           inFirst);
  }

  void emitLoads(size_t first, size_t end, bool firstSegment) {
    StreamBuilder &ld = *load_;
    const int64_t group = tileOf(first).group;
    const int64_t b = group / s_.kvHeads, j = group % s_.kvHeads;
    const int64_t k0 = items_[first].chunk * ch_.keys;
    const int64_t keys = std::min(ch_.keys, s_.keys - k0);
    if (!firstSegment)
      for (StreamBuilder *p : pt_)
        tok_.await(*p, ld, SegmentDone);
    if (firstSegment && tableAddr_)
      ld.append(loadSticks(at(lx_.table), at(*tableAddr_),
                           {maskTableSticks(t_), 1, 1, 0, 0}));
    loadRows(ld, lx_.kraw, false, b, j, k0, keys);
    for (StreamBuilder *f : sfu_)
      tok_.post(ld, *f, KRawReady);
    loadRows(ld, lx_.v, true, b, j, k0, keys);
    // Rows past the keys up to the block's end are read by P V (times
    // zero probabilities): zero them; without chunks once, as later
    // segments load rows below L only.
    const int64_t pad = ceilDiv(keys, kLanes) * kLanes - keys;
    if (pad > 0 && (firstSegment || ch_.chunked(s_)))
      for (int64_t c = 0; c < s_.hdBlocks; ++c)
        ld.append(loadSticks(at(lx_.v + c * ch_.keys + keys),
                             at(static_cast<int64_t>(pb_.zeroSticks(pad))),
                             {pad, 1, 1, 0, 0}));
    for (StreamBuilder *p : pt_)
      tok_.post(ld, *p, VReady);
    for (size_t i = first; i < end; ++i) {
      if (i >= static_cast<size_t>(buffers_))
        for (StreamBuilder *p : pt_)
          tok_.await(*p, ld, QFree);
      const AttentionPlan::Tile &tl = tileOf(i);
      const HeadView q = headView(a_.q, b, tl.head);
      ld.append(loadSticks(at(lx_.q[static_cast<size_t>(bufIndex(i))]),
                           at(q.base + tl.row0 * q.rowStride),
                           {tl.rows, s_.hdBlocks, q.rowStride, q.blockStride,
                            t_}));
      for (StreamBuilder *p : pt_)
        tok_.post(ld, *p, QReady);
      const Item &it = items_[i];
      if (it.first)
        continue;
      // The tile's result so far, once its store is done.
      tok_.await(*store_, ld, YStored);
      const size_t pb = static_cast<size_t>(it.merge % buffers_);
      if (it.merge >= buffers_)
        for (StreamBuilder *f : sfu_)
          tok_.await(*f, ld, PrevFree);
      const HeadView y = headView(a_.y, b, tl.head);
      ld.append(
          loadSticks(at(lx_.prev[pb]), at(y.base + tl.row0 * y.rowStride),
                     {tl.rows, s_.hdBlocks, y.rowStride, y.blockStride, t_}));
      for (StreamBuilder *f : sfu_)
        tok_.post(ld, *f, PrevReady);
    }
  }

  void emitSfu(size_t first, size_t end) {
    const int64_t k0 = items_[first].chunk * ch_.keys;
    const int64_t keys = std::min(ch_.keys, s_.keys - k0);
    for (int u = 0; u < units_; ++u) {
      StreamBuilder &f = *sfu_[static_cast<size_t>(u)];
      tok_.await(*load_, f, KRawReady);
      // K^T: key block kb, hd block c is an xpose of 64 keys x 64 lanes.
      const int64_t n = ceilDiv(keys, kLanes) * s_.hdBlocks;
      for (int64_t x = u * n / units_; x < (u + 1) * n / units_; ++x) {
        const int64_t kb = x / s_.hdBlocks, c = x % s_.hdBlocks;
        f.append(instr<isa::Opcode::Xpose>()
                     .dst(at(lx_.kt + kb * s_.kdim + c * kLanes))
                     .src(at(lx_.kraw + c * ch_.keys + kb * kLanes))
                     .m(std::min(kLanes, keys - kb * kLanes))
                     .k(kLanes));
      }
      for (StreamBuilder *p : pt_)
        tok_.post(f, *p, KtReady);
      for (size_t i = first; i < end; ++i) {
        StreamBuilder &p = *pt_[static_cast<size_t>(u)];
        tok_.await(p, f, SReady);
        softmax(f, i, u);
        tok_.post(f, p, PReady);
        const Item &it = items_[i];
        if (it.first)
          continue;
        tok_.await(p, f, CtxReady);
        tok_.await(*load_, f, PrevReady);
        merge(f, i, u);
        tok_.post(f, *store_, Merged);
        if (it.merge + buffers_ < merges_)
          tok_.post(f, *load_, PrevFree);
      }
    }
  }

  /// Mask, scale and softmax of unit u's rows of item i, P over S.
  void softmax(StreamBuilder &f, size_t i, int u) {
    const auto [r0, r1] = unitRows(i, u);
    const int64_t h = r1 - r0;
    if (h == 0)
      return;
    const Item &it = items_[i];
    const AttentionPlan::Tile &tl = tileOf(i);
    const int64_t nkb = keyBlocks(i);
    const int64_t cb0 = it.chunk * ch_.blocks(); // the chunk's first block
    const Addr sb = at(lx_.s[static_cast<size_t>(bufIndex(i))] + r0);
    if (a_.causal) {
      const int64_t q0 = tl.row0 + r0;
      const int64_t fb =
          std::clamp((q0 + s_.offset + 1) / kLanes - cb0, int64_t{0}, nkb);
      if (fb < nkb)
        f.append(sfuBinary(
            isa::Opcode::Add, sb + fb * t_, sb + fb * t_,
            at(lx_.table + q0 + s_.offset - kLanes * (cb0 + fb) - dMin(t_)),
            {h, nkb - fb, t_, t_, -kLanes, 0}, false, false));
    }
    StickMatrix xm;
    xm.dtype = isa::DType::Dl16;
    xm.cols = it.keys;
    const F32Scratch sc = f32Scratch(
        lx_.scratch[static_cast<size_t>(u)], xm, ceilDiv(t_, units_), false, 0);
    F32Rows r(f, xm, h);
    const Addr xf = at(sc.xf), stat = at(sc.stat), stat2 = at(sc.stat2);
    // Each row's maximum and sum: kept for the tile when a later chunk
    // follows its first, the chunk's own (to merge) after that.
    Addr rowMax = stat, rowSum = stat;
    if (it.first && it.more) {
      rowMax = at(statsOf(i, r0));
      rowSum = at(statsOf(i, r0) + t_);
    } else if (!it.first) {
      const MergeScratch ms = mergeScratch(
          s_, lx_.merge[static_cast<size_t>(u)], ceilDiv(t_, units_));
      rowMax = at(ms.mc);
      rowSum = at(ms.lc);
    }
    r.load(xf, sb, t_);
    if (a_.scale != 1.0f)
      f.append(sfuScalar(isa::Opcode::Muls, xf, xf, a_.scale,
                         {r.f, r.nb * r.h, r.f, r.f, 0, 0}, true));
    r.reduce(isa::Opcode::Rmax, rowMax, xf, at(sc.partial));
    r.rowStat(isa::Opcode::Sub, xf, xf, rowMax,
              r.spread(at(sc.spread), rowMax));
    r.map(isa::Opcode::Exp, xf, xf);
    r.reduce(isa::Opcode::Rsum, rowSum, xf, at(sc.partial));
    r.statUnary(isa::Opcode::Recip, stat2, rowSum);
    r.rowStat(isa::Opcode::Mul, xf, xf, stat2, r.spread(at(sc.spread), stat2));
    r.store(sb, xf, t_);
  }

  /// Unit u's rows of item i: its O_c (in the O buffer, DL16) merged with
  /// the tile's result so far (in a prev buffer), over the O buffer; the
  /// tile's statistics updated.
  void merge(StreamBuilder &f, size_t i, int u) {
    const auto [r0, r1] = unitRows(i, u);
    const int64_t h = r1 - r0;
    if (h == 0)
      return;
    const Item &it = items_[i];
    const int64_t hmax = ceilDiv(t_, units_);
    const MergeScratch ms =
        mergeScratch(s_, lx_.merge[static_cast<size_t>(u)], hmax);
    const Addr m = at(statsOf(i, r0)), l = at(statsOf(i, r0) + t_);
    const Addr mc = at(ms.mc), lc = at(ms.lc), mn = at(ms.mn), wa = at(ms.wa),
               wb = at(ms.wb);
    auto stat2 = [&](isa::Opcode op, Addr dst, Addr x, Addr y) {
      f.append(sfuBinary(op, dst, x, y, {1, h, 1, 1, 1, 0}, false, true));
    };
    auto stat1 = [&](isa::Opcode op, Addr dst, Addr x) {
      f.append(sfuUnary(op, dst, x, {1, h, 1, 1, 0, 0}, true));
    };
    // M = max(m, m_c); a = l exp(m - M); b = l_c exp(m_c - M).
    stat2(isa::Opcode::Max, mn, m, mc);
    stat2(isa::Opcode::Sub, wa, m, mn);
    stat1(isa::Opcode::Exp, wa, wa);
    stat2(isa::Opcode::Mul, wa, wa, l);
    stat2(isa::Opcode::Sub, wb, mc, mn);
    stat1(isa::Opcode::Exp, wb, wb);
    stat2(isa::Opcode::Mul, wb, wb, lc);
    // m = M, l = a + b; the weights a / l and b / l.
    stat1(isa::Opcode::Copy, m, mn);
    stat2(isa::Opcode::Add, l, wa, wb);
    stat1(isa::Opcode::Recip, mc, l);
    stat2(isa::Opcode::Mul, wa, wa, mc);
    stat2(isa::Opcode::Mul, wb, wb, mc);
    StickMatrix om;
    om.dtype = isa::DType::Dl16;
    om.cols = s_.headDim;
    F32Rows o(f, om, h);
    const Addr ob = at(lx_.o[static_cast<size_t>(bufIndex(i))] + r0);
    const Addr prev = at(ms.prev), cur = at(ms.cur);
    o.load(prev, at(lx_.prev[static_cast<size_t>(it.merge % buffers_)] + r0),
           t_);
    o.load(cur, ob, t_);
    o.rowStat(isa::Opcode::Mul, prev, prev, wa, o.spread(at(ms.spread), wa));
    o.rowStat(isa::Opcode::Mul, cur, cur, wb, o.spread(at(ms.spread), wb));
    f.append(sfuBinary(isa::Opcode::Add, cur, cur, prev,
                       {o.f, o.nb * h, o.f, o.f, o.f, 0}, false, true));
    o.store(ob, cur, t_);
  }

  void emitPt(size_t first, size_t end, bool moreSegments) {
    for (int u = 0; u < units_; ++u) {
      StreamBuilder &p = *pt_[static_cast<size_t>(u)];
      for (StreamBuilder *f : sfu_)
        tok_.await(*f, p, KtReady);
      tok_.await(*load_, p, VReady);
      // With two score buffers, Q K^T of item i runs before P V of item
      // i - 1; with one, each item's P V comes first.
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

  /// S = Q K^T for unit u's rows of item i.
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
    if (i + static_cast<size_t>(buffers_) < items_.size())
      tok_.post(p, *load_, QFree);
    tok_.post(p, *sfu_[static_cast<size_t>(u)], SReady);
  }

  /// O = P V for unit u's rows of item i.
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
                   .bs(ch_.keys)
                   .cs(t_)
                   .out(isa::StickFormat::Dl16));
    if (items_[i].first)
      tok_.post(p, *store_, OReady);
    else
      tok_.post(p, *sfu_[static_cast<size_t>(u)], CtxReady);
  }

  void emitStores() {
    StreamBuilder &st = *store_;
    for (size_t i = 0; i < items_.size(); ++i) {
      const Item &it = items_[i];
      if (it.first)
        for (StreamBuilder *p : pt_)
          tok_.await(*p, st, OReady);
      else
        for (StreamBuilder *f : sfu_)
          tok_.await(*f, st, Merged);
      const AttentionPlan::Tile &tl = tileOf(i);
      const HeadView y = headView(a_.y, tl.group / s_.kvHeads, tl.head);
      st.append(storeSticks(at(y.base + tl.row0 * y.rowStride),
                            at(lx_.o[static_cast<size_t>(bufIndex(i))]),
                            {tl.rows, s_.hdBlocks, y.rowStride, y.blockStride,
                             t_}));
      if (i + static_cast<size_t>(buffers_) < items_.size())
        for (StreamBuilder *p : pt_)
          tok_.post(st, *p, OFree);
      if (it.more)
        tok_.post(st, *load_, YStored);
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
  Chunking ch_;
  LxLayout lx_;
  int units_, buffers_;
  StreamBuilder *load_ = nullptr, *store_ = nullptr;
  std::vector<StreamBuilder *> pt_, sfu_;
  std::vector<Item> items_;
  std::vector<std::pair<size_t, size_t>> segments_; ///< runs of items
  int64_t merges_ = 0;
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
           ", " + std::to_string(scores) + " scores" +
           (chunkKeys > 0 ? ", keys in chunks of " + std::to_string(chunkKeys)
                          : std::string()) +
           "\n";
  }
  return out;
}

AttentionPlan planAttention(const hw::HwConfig &config,
                            const AttentionArgs &args,
                            const KernelOptions &opt) {
  const Shape s = shapeOf(args);
  const Resources res = resources(config, opt);
  AttentionPlan plan;
  const int64_t groups = s.batch * s.kvHeads;
  // Per chunk size (all the keys first, then halves of them in whole
  // blocks): the largest tile up to 64 rows whose working set fits on
  // every core, and the cores per group of the lowest estimate. The chunk
  // size of the lowest estimate wins; all the keys at once on a tie.
  bool found = false;
  int64_t bestCycles = 0;
  for (int64_t ck = s.keysPadded;;
       ck = ceilDiv(ceilDiv(ck, 2), kLanes) * kLanes) {
    for (int64_t t = std::min(kMaxTileRows, s.queries); t >= 1; t /= 2) {
      // Without statistics (none kept when nothing is chunked): a lower
      // bound of every core's working set.
      if (lxLayout(s, {ck, 0}, t, res.units, res.buffers, args.causal,
                   res.lxBase)
              .end > res.lxEnd)
        continue;
      const int64_t tilesPerGroup = s.group * ceilDiv(s.queries, t);
      const int maxCpg = static_cast<int>(std::max<int64_t>(
          1, std::min<int64_t>(res.cores / std::min<int64_t>(groups, res.cores),
                               tilesPerGroup)));
      bool fits = false;
      for (int cpg = 1; cpg <= maxCpg; ++cpg) {
        std::vector<AttentionPlan::Part> parts =
            assignTiles(s, args.causal, t, cpg, res);
        int64_t end = 0;
        for (const AttentionPlan::Part &p : parts)
          end = std::max(end, lxLayout(s, {ck, statTilesOf(p.tiles, ck)}, t,
                                       res.units, res.buffers, args.causal,
                                       res.lxBase)
                                  .end);
        if (end > res.lxEnd)
          continue;
        fits = true;
        const int64_t c =
            estimate(config, s, args.causal, t, ck, cpg, res.cores, res.units);
        if (!found || c < bestCycles) {
          found = true;
          bestCycles = c;
          plan.tileRows = t;
          plan.coresPerGroup = cpg;
          plan.chunkKeys = ck < s.keysPadded ? ck : 0;
          plan.lxSticks = end - res.lxBase;
          plan.parts = std::move(parts);
        }
      }
      if (fits)
        break;
    }
    if (ck <= kLanes)
      break;
  }
  if (!found) {
    plan.error =
        "the keys and values of one head (" + std::to_string(s.keys) + " x " +
        std::to_string(s.headDim) + ") do not fit the LX region of " +
        std::to_string(res.lxSticks()) + " sticks, even 64 keys at a time";
    return plan;
  }
  plan.estimatedCycles = bestCycles;
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
  const int64_t ck = plan.chunkKeys > 0 ? plan.chunkKeys : s.keysPadded;
  for (const AttentionPlan::Part &p : plan.parts)
    AttentionCore(pb, args, s, res, plan.tileRows, ck, p.core, p.tiles, table)
        .emit();
  return plan;
}

} // namespace spyre::codegen
