// The assembler's directives: .program, .core, .engine, .op, .host,
// .tensor (AssemblerParser.h; docs/assembly.md).
#include "isa/AssemblerParser.h"

#include "numerics/Dlf16.h"
#include "support/ParseNumber.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
namespace spyre::isa::asm_detail {

void Assembler::directive() {
  const Token &d = next();
  if (d.text == ".program")
    return dirProgram(d);
  if (d.text == ".core")
    return dirCore();
  if (d.text == ".engine")
    return dirEngine(d);
  if (d.text == ".op")
    return dirOp(d);
  if (d.text == ".tensor")
    return dirTensor(d);
  if (d.text == ".host")
    return dirHost(d);
  error(d, "unknown directive '" + d.text +
               "' (expected .program, .tensor, .host, .core, .engine or .op)");
  skipLine();
}

void Assembler::dirProgram(const Token &d) {
  if (peek().kind != Tok::String) {
    error(peek(), "'.program' needs a quoted name, found " + describe(peek()));
    return skipLine();
  }
  const Token &name = next();
  if (haveName_)
    error(d, "'.program' given twice (first on line " +
                 std::to_string(nameLine_) + ")");
  haveName_ = true;
  nameLine_ = d.line;
  if (hasControlChar(name.text))
    error(name, "the program name holds a control character");
  program_.name = name.text;
  expectLineEnd("the program name");
}

void Assembler::dirCore() {
  finishStream();
  core_.reset();
  std::optional<int64_t> v;
  if (peek().kind == Tok::Number)
    v = parseInt(peek().text);
  if (!v) {
    error(peek(), "'.core' needs a core number, found " + describe(peek()));
    return skipLine();
  }
  const Token &num = next();
  int64_t cores = config_.chip.cores;
  if (*v < 0 || *v >= cores) {
    error(num, "core " + num.text + " is out of range (valid: 0.." +
                   std::to_string(cores - 1) +
                   ", chip.cores = " + std::to_string(cores) + ")");
    return skipLine();
  }
  core_ = static_cast<int>(*v);
  expectLineEnd("the core number");
}

void Assembler::dirEngine(const Token &d) {
  finishStream();
  if (peek().kind != Tok::Ident) {
    error(peek(), "'.engine' needs an engine name (dma.load, dma.store, pt.N, "
                  "sfu.N or ring), found " +
                      describe(peek()));
    return skipLine();
  }
  const Token &name = next();
  std::optional<Engine> engine;
  int unit = 0;
  bool unitOk = true;
  for (int e = 0; e < kNumEngines; ++e) {
    Engine eng = static_cast<Engine>(e);
    std::string base(engineName(eng));
    if (!engineHasUnits(eng)) {
      if (name.text == base)
        engine = eng;
      continue;
    }
    if (name.text != base && name.text.rfind(base + ".", 0) != 0)
      continue;
    engine = eng;
    std::optional<int64_t> u;
    if (name.text != base)
      u = prefixedNumber("#" + name.text.substr(base.size() + 1), '#');
    unitOk = u && *u < config_.chip.coreletsPerCore;
    if (unitOk)
      unit = static_cast<int>(*u);
  }
  if (!engine) {
    error(name, "unknown engine '" + name.text +
                    "' (expected dma.load, dma.store, pt.N, sfu.N or ring)");
    return skipLine();
  }
  if (!unitOk) {
    std::string base(engineName(*engine));
    error(name, "no engine '" + name.text + "' (valid: " + base + ".0.." +
                    base + "." +
                    std::to_string(config_.chip.coreletsPerCore - 1) +
                    ", chip.corelets_per_core = " +
                    std::to_string(config_.chip.coreletsPerCore) + ")");
    return skipLine();
  }
  if (!core_) {
    error(d, "'.engine' needs a '.core' first");
    return skipLine();
  }
  StreamState s;
  s.stream.core = *core_;
  s.stream.engine = *engine;
  s.stream.unit = unit;
  s.line = d.line;
  s.col = d.col;
  auto key = std::tuple(*core_, *engine, unit);
  auto [it, added] = streamLine_.emplace(key, d.line);
  if (!added) {
    error(name, "stream " + s.stream.name() + " defined twice (first on line " +
                    std::to_string(it->second) + ")");
    s.discard = true;
  }
  streams_.push_back(std::move(s));
  current_ = static_cast<int>(streams_.size()) - 1;
  expectLineEnd("the engine name");
}

void Assembler::dirOp(const Token &d) {
  uint32_t op = kNoProvenance;
  if (peek().kind == Tok::String) {
    const Token &name = next();
    if (hasControlChar(name.text))
      error(name, "the op name holds a control character");
    auto [it, added] = opIndex_.emplace(
        name.text, static_cast<uint32_t>(program_.strings.size()));
    if (added)
      program_.strings.push_back(name.text);
    op = it->second;
  } else if (!atLineEnd()) {
    error(peek(), "'.op' takes a quoted op name (or nothing, for no op), "
                  "found " +
                      describe(peek()));
    return skipLine();
  }
  if (current_ < 0) {
    error(d, "'.op' outside a stream (open one with .core and .engine)");
    return skipLine();
  }
  streams_[static_cast<size_t>(current_)].currentOp = op;
  expectLineEnd("the op name");
}

void Assembler::dirHost(const Token &d) {
  auto want = [&](bool ok, const std::string &what) {
    if (ok)
      return true;
    error(peek(), "'.host' expects " + what + ", found " + describe(peek()) +
                      " (syntax: .host NAME OPTYPE \"ATTRS\" in TENSORS... "
                      "out TENSORS... flops N)");
    skipLine();
    return false;
  };
  auto isName = [&] {
    return peek().kind == Tok::Ident || peek().kind == Tok::String;
  };
  PendingHost h;
  h.at = d;
  if (!want(isName(), "a name"))
    return;
  if (hasControlChar(peek().text))
    error(peek(), "the host op's name holds a control character");
  h.decl.name = next().text;
  if (!want(isName(), "an ONNX op type"))
    return;
  if (hasControlChar(peek().text))
    error(peek(), "the host op's type holds a control character");
  h.decl.opType = next().text;
  if (!want(peek().kind == Tok::String,
            "the attributes as a quoted JSON object"))
    return;
  h.decl.attrs = next().text;
  if (!want(peek().kind == Tok::Ident && peek().text == "in", "'in'"))
    return;
  next();
  while (isName() && peek().text != "out")
    h.inputs.push_back(next());
  if (!want(peek().kind == Tok::Ident && peek().text == "out", "'out'"))
    return;
  next();
  while (isName() && peek().text != "flops")
    h.outputs.push_back(next());
  if (!want(peek().kind == Tok::Ident && peek().text == "flops", "'flops'"))
    return;
  next();
  std::optional<int64_t> flops;
  if (peek().kind == Tok::Number)
    flops = parseInt(peek().text);
  if (!want(flops && *flops >= 0, "a flop count"))
    return;
  next();
  h.decl.flops = static_cast<uint64_t>(*flops);
  hosts_.push_back(std::move(h));
  expectLineEnd("the flop count");
}

void Assembler::finishHostOps() {
  for (PendingHost &h : hosts_) {
    bool ok = true;
    for (auto [names, indices] : {std::pair{&h.inputs, &h.decl.inputs},
                                  std::pair{&h.outputs, &h.decl.outputs}})
      for (const Token &n : *names) {
        const TensorDecl *t = program_.findTensor(n.text);
        if (!t) {
          error(n, "no tensor '" + n.text + "' (declare it with .tensor)");
          ok = false;
          continue;
        }
        indices->push_back(static_cast<uint32_t>(t - program_.tensors.data()));
      }
    if (!ok)
      continue;
    std::string problem = checkHostOp(program_, h.decl);
    if (!problem.empty())
      error(h.at, "host op '" + h.decl.name + "': " + problem);
    program_.hostOps.push_back(h.decl);
  }
  const int opField = instrDesc(Opcode::Host).fieldIndex("op");
  for (const StreamState &s : streams_)
    for (size_t k = 0; k < s.stream.code.size(); ++k) {
      const Instr &in = s.stream.code[k];
      if (in.opcode == Opcode::Host &&
          static_cast<uint64_t>(in.value[static_cast<size_t>(opField)]) >=
              program_.hostOps.size())
        error(k < s.instrLoc.size() ? s.instrLoc[k].first : 0,
              k < s.instrLoc.size() ? s.instrLoc[k].second : 0,
              "stream " + s.stream.name() + ", instruction " +
                  std::to_string(k) + ": host op " +
                  std::to_string(in.value[static_cast<size_t>(opField)]) +
                  " is not declared (the program has " +
                  std::to_string(program_.hostOps.size()) +
                  " .host directives)");
    }
}

void Assembler::dirTensor(const Token &d) {
  auto want = [&](bool ok, const std::string &what) {
    if (ok)
      return true;
    error(peek(), "'.tensor' expects " + what + ", found " + describe(peek()) +
                      " (syntax: .tensor KIND NAME DTYPE [DIMS] @ ADDRESS "
                      "[= [VALUES]])");
    skipLine();
    return false;
  };
  TensorDecl t;
  if (!want(peek().kind == Tok::Ident,
            "a kind (input, output, const, scratch)"))
    return;
  const Token &kind = next();
  std::optional<TensorKind> k = parseTensorKind(kind.text);
  if (!k) {
    error(kind, "unknown tensor kind '" + kind.text +
                    "' (expected input, output, const or scratch)");
    return skipLine();
  }
  t.kind = *k;
  if (!want(peek().kind == Tok::Ident || peek().kind == Tok::String, "a name"))
    return;
  const Token &name = next();
  t.name = name.text;
  if (std::string why = tensorNameProblem(t.name, t.kind); !why.empty()) {
    error(name, std::string(tensorKindName(t.kind)) + " tensor '" +
                    printableName(t.name) + "': " + why);
    return skipLine();
  }
  if (!want(peek().kind == Tok::Ident, "a dtype (dl16, fp32, int8, int32)"))
    return;
  const Token &dtype = next();
  std::optional<DType> dt = parseDType(dtype.text);
  if (!dt) {
    error(dtype, "unknown dtype '" + dtype.text +
                     "' (expected dl16, fp32, int8 or int32)");
    return skipLine();
  }
  t.dtype = *dt;
  if (!want(peek().is('['), "'[' and the host shape"))
    return;
  const Token &open = next();
  uint64_t elements = 1;
  while (true) {
    std::optional<int64_t> v;
    if (peek().kind == Tok::Number)
      v = parseInt(peek().text);
    if (!v || *v < 1) {
      error(peek(),
            "tensor dims must be positive integers, found " + describe(peek()));
      return skipLine();
    }
    const Token &dim = next();
    if (static_cast<uint64_t>(*v) > kMaxElements / elements) {
      error(dim, "tensor '" + t.name + "' is too large");
      return skipLine();
    }
    elements *= static_cast<uint64_t>(*v);
    t.hostShape.push_back(*v);
    if (peek().is(',')) {
      next();
      continue;
    }
    if (!want(peek().is(']'), "',' or ']' in the shape"))
      return;
    next();
    break;
  }
  if (t.hostShape.size() > static_cast<size_t>(kMaxRank)) {
    error(open, "tensor '" + t.name + "' has " +
                    std::to_string(t.hostShape.size()) + " dims; at most " +
                    std::to_string(kMaxRank) + " are supported");
    return skipLine();
  }
  if (!want(peek().is('@'), "'@' and an address in sticks"))
    return;
  next();
  std::optional<int64_t> addr;
  if (peek().kind == Tok::Number)
    addr = parseInt(peek().text);
  if (!addr || *addr < 0) {
    error(peek(), "tensor address must be a non-negative number of sticks, "
                  "found " +
                      describe(peek()));
    return skipLine();
  }
  const Token &addrTok = next();
  t.address = static_cast<uint64_t>(*addr);
  t.deviceShape = deviceShapeOf(t.hostShape, t.dtype);
  t.sizeSticks = sticksOf(t.deviceShape);

  // Constant values, possibly over several lines.
  bool haveValues = false;
  std::vector<Token> values;
  if (peek().is('=')) {
    const Token &eq = next();
    haveValues = true;
    if (!want(peek().is('['), "'[' and the constant's values"))
      return;
    next();
    while (true) {
      while (peek().kind == Tok::Newline)
        next();
      if (peek().is(']') && values.empty()) {
        next();
        break;
      }
      Token v = peek();
      if (v.is('-') || v.is('+')) {
        next();
        if (peek().kind != Tok::Number && peek().kind != Tok::Ident) {
          error(peek(), "expected a number after '" + v.text + "', found " +
                            describe(peek()));
          return skipLine();
        }
        v.text += next().text;
      } else if (v.kind == Tok::Number || v.kind == Tok::Ident) {
        next();
      } else {
        error(v, "expected a constant value, found " + describe(v));
        return skipLine();
      }
      values.push_back(v);
      while (peek().kind == Tok::Newline)
        next();
      if (peek().is(',')) {
        next();
        continue;
      }
      if (peek().is(']')) {
        next();
        break;
      }
      error(peek(), "expected ',' or ']' in the constant's values, found " +
                        describe(peek()));
      return skipLine();
    }
    if (t.kind != TensorKind::Const) {
      error(eq, "only const tensors take values; '" + t.name + "' is " +
                    std::string(tensorKindName(t.kind)));
      return skipLine();
    }
  }
  if (!expectLineEnd("the tensor declaration"))
    return;

  bool ok = true;
  if (t.kind == TensorKind::Const && !haveValues) {
    error(d, "constant '" + t.name + "' needs values (= [...])");
    ok = false;
  }
  if (haveValues && values.size() != elements) {
    std::string shape;
    for (int64_t v : t.hostShape)
      shape += (shape.empty() ? "" : ", ") + std::to_string(v);
    error(d, "constant '" + t.name + "' has " + std::to_string(values.size()) +
                 " values; its shape [" + shape + "] needs " +
                 std::to_string(elements));
    ok = false;
  }
  if (ok && haveValues) {
    t.data.assign(t.sizeSticks * kStickBytes, 0);
    for (size_t i = 0; i < values.size(); ++i) {
      const Token &v = values[i];
      uint64_t off = deviceByteOffset(t.hostShape, t.dtype, i);
      uint8_t *dst = t.data.data() + off;
      if (t.dtype == DType::Dl16 || t.dtype == DType::Fp32) {
        bool outOfRange = false;
        std::optional<float> f = parseFloat(v.text, &outOfRange);
        if (outOfRange) {
          error(v, "'" + v.text + "' is not representable as FP32");
          ok = false;
          continue;
        }
        if (!f) {
          error(v, "'" + v.text + "' is not a number");
          ok = false;
          continue;
        }
        if (t.dtype == DType::Dl16) {
          dlf16::Flags flags;
          uint16_t code =
              dlf16::fromFloat(*f, dlf16::Overflow::ToSpecial, &flags);
          if (flags.overflow && std::isfinite(*f)) {
            error(v, "'" + v.text + "' is beyond the DL16 range (largest " +
                         formatFloat(dlf16::toFloat(dlf16::kMaxFinite)) + ")");
            ok = false;
            continue;
          }
          dst[0] = static_cast<uint8_t>(code & 0xFF);
          dst[1] = static_cast<uint8_t>(code >> 8);
        } else {
          uint32_t bits = canonicalBits(*f);
          for (int b = 0; b < 4; ++b)
            dst[b] = static_cast<uint8_t>(bits >> (8 * b));
        }
        continue;
      }
      std::optional<int64_t> n = parseInt(v.text);
      int64_t lo = t.dtype == DType::Int8 ? -128 : INT32_MIN;
      int64_t hi = t.dtype == DType::Int8 ? 127 : INT32_MAX;
      if (!n || *n < lo || *n > hi) {
        error(v, "'" + v.text + "' is not an " +
                     std::string(dtypeName(t.dtype)) + " value (" +
                     std::to_string(lo) + ".." + std::to_string(hi) + ")");
        ok = false;
        continue;
      }
      uint32_t bits = static_cast<uint32_t>(*n);
      for (int b = 0; b < dtypeBytes(t.dtype); ++b)
        dst[b] = static_cast<uint8_t>(bits >> (8 * b));
    }
  }

  for (size_t i = 0; i < program_.tensors.size(); ++i) {
    const TensorDecl &o = program_.tensors[i];
    if (o.name == t.name) {
      error(name, "tensor '" + t.name + "' declared twice (first on line " +
                      std::to_string(tensorLoc_[i].line) + ")");
      return;
    }
  }
  auto range = [](const TensorDecl &x) {
    // The address is below 2^63 (the parser refuses more) and the size far
    // below, so the end fits in 64 unsigned bits but maybe not in signed.
    return "[" + hexTextUnsigned(x.address) + ", " +
           hexTextUnsigned(x.address + x.sizeSticks) + ")";
  };
  uint64_t memSticks =
      static_cast<uint64_t>(config_.memory.sizeBytes) / kStickBytes;
  if (t.address + t.sizeSticks > memSticks) {
    error(addrTok, "tensor '" + t.name + "' at sticks " + range(t) +
                       " lies beyond device memory (" +
                       hexTextUnsigned(memSticks) +
                       " sticks, memory.size_bytes = " +
                       std::to_string(config_.memory.sizeBytes) + ")");
    ok = false;
  }
  for (size_t i = 0; i < program_.tensors.size(); ++i) {
    const TensorDecl &o = program_.tensors[i];
    if (t.address < o.address + o.sizeSticks &&
        o.address < t.address + t.sizeSticks && !replacesInPlace(t, o)) {
      error(addrTok, "tensor '" + t.name + "' at sticks " + range(t) +
                         " overlaps tensor '" + o.name + "' at " + range(o) +
                         " (line " + std::to_string(tensorLoc_[i].line) + ")");
      ok = false;
      break;
    }
  }
  if (!ok)
    return;
  program_.tensors.push_back(std::move(t));
  tensorLoc_.push_back({d.line, d.col});
}

} // namespace spyre::isa::asm_detail
