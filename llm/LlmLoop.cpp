#include "llm/LlmLoop.h"

#include "compiler/codegen/ProgramBuilder.h"
#include "compiler/driver/Compile.h"
#include "compiler/ir/Attribute.h"
#include "run/RunModel.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace spyre::llm {

namespace {

using compiler::Graph;
using compiler::Value;
using isa::Engine;
using isa::FieldKind;
using isa::Instr;
using isa::Opcode;

/// What `addi` can add in one instruction: 24 bits, signed.
constexpr uint64_t kMaxStrideSticks = uint64_t(1) << 23;
/// Alignment of the tensors a piece is given (sticks).
constexpr uint64_t kAlignSticks = 64;

uint64_t alignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

uint64_t sticksOfValue(const Value &v) {
  const isa::DType dtype = v.type().elementType == compiler::ElementType::F32
                               ? isa::DType::Fp32
                               : isa::DType::Dl16;
  std::vector<int64_t> shape = v.type().shape;
  if (shape.empty())
    shape = {1};
  return isa::sticksOf(isa::deviceShapeOf(shape, dtype));
}

isa::Program compilePiece(const Graph &graph, const hw::HwConfig &hw,
                          int optLevel, const compiler::Placement &placement) {
  compiler::CompileOptions co;
  co.optLevel = optLevel;
  co.placement = placement;
  DiagnosticEngine diags;
  compiler::CompileOutcome outcome = compiler::compile(graph, hw, co, diags);
  if (!outcome.result)
    throw run::CompileError(diags, outcome.status ==
                                       compiler::CompileStatus::InternalError);
  return std::move(outcome.result->program);
}

/// The end (sticks) of the highest tensor of `p`.
uint64_t endOf(const isa::Program &p) {
  uint64_t end = 0;
  for (const isa::TensorDecl &t : p.tensors)
    end = std::max(end, t.address + t.sizeSticks);
  return end;
}

/// What comes before the first layer: the lookup of the token ids
/// (shape.tokenIds: input_ids -> rows of model.embed_tokens.weight) and the
/// embedding multiplier (when the step asks for it and the config has one),
/// or the multiplier alone on the looked-up rows (`hidden`).
std::unique_ptr<Graph> embeddingGraph(const LlmConfig &c, const StepShape &s) {
  auto g = std::make_unique<Graph>("embedding");
  Value *x = nullptr;
  if (s.tokenIds) {
    x = lookUpTokens(*g, c, s);
  } else {
    x = g->addInput("hidden", compiler::TensorType{
                                  s.elementType,
                                  {s.batch, s.tokens, c.hiddenSize}});
  }
  if (s.embedding && c.embeddingMultiplier != 1.0) {
    Value *m = g->addConstant(
        "embedding_multiplier",
        compiler::ConstantData::fromDoubles(
            compiler::TensorType{s.elementType, {}}, {c.embeddingMultiplier}));
    x = compiler::buildOp(*g, compiler::OpKind::Mul, "embed_scale", {x, m}, {},
                          {"embed_scale"})
            ->result(0);
  }
  std::vector<Value *> outputs = {x};
  if (s.rotary == Rotary::Ids) {
    // The rotary tables of the step's positions, gathered once for every
    // layer (the layer reads them as rope.cos and rope.sin).
    const auto [cos, sin] = gatherRotaryRows(*g, c, s);
    outputs.push_back(cos);
    outputs.push_back(sin);
  }
  g->setOutputs(outputs);
  return g;
}

std::string layerName(const std::string &name, int64_t layer) {
  static const std::string kPrefix = "model.layers.0.";
  SPYRE_ASSERT(name.rfind(kPrefix, 0) == 0,
               "a layer's own tensor '" + name + "' outside its layer");
  return "model.layers." + std::to_string(layer) + "." +
         name.substr(kPrefix.size());
}

using StreamKey = std::tuple<int, int, int>;

StreamKey keyOf(const isa::Stream &s) {
  return {s.core, static_cast<int>(s.engine), s.unit};
}

/// The registers a stream's code names (sources, destinations, bases).
uint16_t registersUsed(const isa::Stream &s) {
  uint16_t used = 1;
  for (const Instr &in : s.code) {
    const isa::InstrDesc &d = in.desc();
    for (size_t f = 0; f < d.fields.size(); ++f) {
      const isa::FieldDesc &fd = d.fields[f];
      if (fd.kind == FieldKind::Reg || fd.kind == FieldKind::RegDst)
        used = static_cast<uint16_t>(used | (1u << in.value[f]));
      if (fd.isAddress())
        used = static_cast<uint16_t>(used | (1u << in.base[f]));
    }
  }
  return used;
}

/// Rewrites the layer's code of one stream so that every device address in
/// [start, start + stride) is `base` + (address - start): absolute memory
/// operands take `base`, and an `li` of such an address becomes an `addi`
/// from `base` (the registers it feeds then follow the layer).
void relocate(isa::Stream &s, uint64_t start, uint64_t stride, int base) {
  const auto inLayer = [&](int64_t v) {
    return v >= 0 && static_cast<uint64_t>(v) >= start &&
           static_cast<uint64_t>(v) < start + stride;
  };
  for (Instr &in : s.code) {
    if (in.opcode == Opcode::Li) {
      const isa::InstrDesc &d = in.desc();
      const size_t imm = static_cast<size_t>(d.fieldIndex("imm"));
      const size_t rd = static_cast<size_t>(d.fieldIndex("rd"));
      if (!inLayer(in.value[imm]))
        continue;
      const int64_t reg = in.value[rd],
                    offset = in.value[imm] - static_cast<int64_t>(start);
      Instr addi;
      addi.opcode = Opcode::Addi;
      const isa::InstrDesc &a = addi.desc();
      addi.value[static_cast<size_t>(a.fieldIndex("rd"))] = reg;
      addi.value[static_cast<size_t>(a.fieldIndex("rs"))] = base;
      addi.value[static_cast<size_t>(a.fieldIndex("imm"))] = offset;
      in = addi;
      continue;
    }
    const isa::InstrDesc &d = in.desc();
    for (size_t f = 0; f < d.fields.size(); ++f)
      if (d.fields[f].kind == FieldKind::MemAddr && in.base[f] == 0 &&
          inLayer(in.value[f])) {
        in.base[f] = static_cast<uint8_t>(base);
        in.value[f] -= static_cast<int64_t>(start);
      }
  }
}

/// Appends `code` (without its final halt) with its provenance, mapped
/// into `pb`'s string table.
void appendCode(codegen::ProgramBuilder &pb, codegen::StreamBuilder &out,
                const isa::Program &from, const isa::Stream &s) {
  SPYRE_ASSERT(!s.code.empty() && s.code.back().opcode == Opcode::Halt,
               "stream " + s.name() + " does not end with halt");
  uint32_t current = isa::kNoProvenance - 1;
  for (size_t i = 0; i + 1 < s.code.size(); ++i) {
    if (s.provenance[i] != current) {
      current = s.provenance[i];
      const std::string *op = from.provenanceOf(s, i);
      pb.setOp(op ? *op : std::string());
    }
    out.append(s.code[i]);
  }
  pb.setOp({});
}

} // namespace

LoopedProgram compileLoopedModel(const LlmConfig &config,
                                 const StepShape &shape,
                                 const hw::HwConfig &hw, int optLevel,
                                 const ResidentLayout *resident) {
  SPYRE_ASSERT(!shape.residentCache || resident,
               "a looped step with a resident cache needs the device's layout");
  checkStepShape(config, shape);
  const int64_t layers = shape.layers;
  const bool embedding =
      shape.tokenIds || shape.rotary == Rotary::Ids ||
      (shape.embedding && config.embeddingMultiplier != 1.0);

  StepShape one = shape;
  one.layers = 1;
  one.embedding = false;
  one.lmHead = false;
  one.tokenIds = false;
  if (shape.rotary == Rotary::Ids)
    one.rotary = Rotary::Gathered;
  const std::unique_ptr<Graph> layer = buildLlmGraph(config, one);
  std::unique_ptr<Graph> head =
      shape.lmHead ? buildRungGraph(config, one, Rung::LmHead) : nullptr;
  std::unique_ptr<Graph> embed =
      embedding ? embeddingGraph(config, shape) : nullptr;

  // Shared tensors first: the embedding's input, the hidden state between
  // layers, the rotary tables and the head's weights.
  compiler::Placement layerPlace, headPlace, embedPlace;
  // On a persistent device the step's own tensors go above what it keeps.
  uint64_t next = resident ? resident->placement.firstFree : 0;
  const auto place = [&](compiler::Placement &p, const Value &v) {
    next = alignUp(next, kAlignSticks);
    p.addresses[v.name()] = next;
    next += sticksOfValue(v);
    return p.addresses[v.name()];
  };
  /// The device's address of a resident tensor, if `v` is one.
  const auto residentAt = [&](const Value &v) -> std::optional<uint64_t> {
    if (!resident)
      return std::nullopt;
    auto it = resident->placement.addresses.find(v.name());
    if (it == resident->placement.addresses.end())
      return std::nullopt;
    return it->second;
  };
  if (embed)
    for (const Value *v : embed->inputs()) {
      if (std::optional<uint64_t> at = residentAt(*v))
        embedPlace.addresses[v->name()] = *at;
      else if (v == embed->inputs().front() || v->name() == "position_ids")
        place(embedPlace, *v);
    }
  const Value &hiddenIn = *layer->inputs().front();
  SPYRE_ASSERT(hiddenIn.name() == "hidden", "the layer's first input");
  const uint64_t state = place(layerPlace, hiddenIn);
  const Value &layerOut = *layer->outputs().front();
  layerPlace.addresses[layerOut.name()] = state;
  if (embed)
    embedPlace.addresses[embed->outputs().front()->name()] = state;
  if (head)
    for (const Value *v : head->inputs()) {
      if (v->name() == "hidden")
        headPlace.addresses[v->name()] = state;
      else if (std::optional<uint64_t> at = residentAt(*v))
        headPlace.addresses[v->name()] = *at;
      else
        place(headPlace, *v);
    }
  std::vector<const Value *> own; // layer 0's tensors, in region order
  for (const Value *v : layer->inputs()) {
    if (v == &hiddenIn)
      continue;
    if (v->name().rfind("rope.", 0) == 0)
      place(layerPlace, *v);
    else
      own.push_back(v);
  }
  for (const Value *v : layer->outputs())
    if (v != &layerOut)
      own.push_back(v);
  // The rotary tables the embedding piece gathers go where the layer reads
  // them.
  std::set<std::string> gathered;
  if (embed)
    for (const Value *v : embed->outputs())
      if (v != embed->outputs().front()) {
        embedPlace.addresses[v->name()] = layerPlace.addresses.at(v->name());
        gathered.insert(v->name());
      }

  // The layers' region: above LX addresses, so that no `li` of an LX
  // address is taken for one of a layer's tensors. On a persistent device
  // it is where the device keeps layer 0's weights and cache.
  uint64_t start = 0, stride = 0;
  if (resident) {
    start = resident->start;
    stride = resident->stride;
    SPYRE_ASSERT(start >= static_cast<uint64_t>(hw.lxSticks()),
                 "the device's layer regions start among the LX addresses");
    for (const Value *v : own) {
      std::optional<uint64_t> at = residentAt(*v);
      SPYRE_ASSERT(at && *at >= start && *at + sticksOfValue(*v) <= start + stride,
                   "layer 0's tensor '" + v->name() +
                       "' is not in the device's region of layer 0");
      layerPlace.addresses[v->name()] = *at;
    }
  } else {
    start = alignUp(
        std::max<uint64_t>(next, static_cast<uint64_t>(hw.lxSticks())),
        kAlignSticks);
    uint64_t offset = 0;
    for (const Value *v : own) {
      offset = alignUp(offset, kAlignSticks);
      layerPlace.addresses[v->name()] = start + offset;
      offset += sticksOfValue(*v);
    }
    stride = alignUp(std::max<uint64_t>(offset, 1), kAlignSticks);
  }
  if (stride >= kMaxStrideSticks)
    throw UserError(SourceLoc{"config.json"},
                    "one layer's weights and cache take " +
                        std::to_string(stride * isa::kStickBytes) +
                        " bytes, more than the 1 GiB a loop over the layers "
                        "can step (addi adds at most 2^23 sticks)");
  if (layers > hw.limits.maxLoopCount)
    throw UserError(SourceLoc{"config.json"},
                    std::to_string(layers) + " layers are more than a loop "
                    "runs (limits.max_loop_count " +
                        std::to_string(hw.limits.maxLoopCount) + ")");
  if ((start + static_cast<uint64_t>(layers) * stride) * isa::kStickBytes >
      static_cast<uint64_t>(hw.memory.sizeBytes))
    throw UserError(SourceLoc{"config.json"},
                    "the model's " + std::to_string(layers) +
                        " layers do not fit the card's device memory");

  // The layer inside one more loop than its kernels: compiled for a config
  // with one loop level less.
  hw::HwConfig inner = hw;
  SPYRE_ASSERT(inner.limits.maxLoopDepth >= 2,
               "a loop over the layers needs two loop levels");
  inner.limits.maxLoopDepth -= 1;
  layerPlace.firstFree =
      resident ? alignUp(next, kAlignSticks)
               : start + static_cast<uint64_t>(layers) * stride;
  const isa::Program layerProgram =
      compilePiece(*layer, inner, optLevel, layerPlace);
  std::optional<isa::Program> headProgram, embedProgram;
  uint64_t free = endOf(layerProgram);
  if (head) {
    headPlace.firstFree = alignUp(free, kAlignSticks);
    headProgram = compilePiece(*head, hw, optLevel, headPlace);
    free = endOf(*headProgram);
  }
  if (embed) {
    embedPlace.firstFree = alignUp(free, kAlignSticks);
    embedProgram = compilePiece(*embed, hw, optLevel, embedPlace);
  }
  const std::vector<const isa::Program *> pieces = {
      &layerProgram, headProgram ? &*headProgram : nullptr,
      embedProgram ? &*embedProgram : nullptr};
  for (const isa::Program *p : pieces)
    if (p && !p->hostOps.empty())
      throw UserError(SourceLoc{"config.json"},
                      "a loop over the layers cannot hold host ops");

  // The program: every stream of the chip, each the embedding's code, the
  // loop over the layers, the head's code.
  codegen::ProgramBuilder pb(hw, layer->name());
  std::map<StreamKey, const isa::Stream *> layerStreams, headStreams,
      embedStreams;
  for (const isa::Stream &s : layerProgram.streams)
    layerStreams[keyOf(s)] = &s;
  if (head)
    for (const isa::Stream &s : headProgram->streams)
      headStreams[keyOf(s)] = &s;
  if (embed)
    for (const isa::Stream &s : embedProgram->streams)
      embedStreams[keyOf(s)] = &s;
  // Create every stream first (barrierAll does), so the barriers count them
  // all.
  pb.barrierAll();
  LoopedProgram out;
  out.strideSticks = stride;
  int64_t streams = 0;
  for (int c = 0; c < hw.chip.cores; ++c)
    for (int e = 0; e < isa::kNumEngines; ++e)
      for (int u = 0;
           u < (isa::engineHasUnits(static_cast<Engine>(e))
                    ? hw.chip.coreletsPerCore
                    : 1);
           ++u)
        ++streams;
  for (int c = 0; c < hw.chip.cores; ++c)
    for (int e = 0; e < isa::kNumEngines; ++e) {
      const auto engine = static_cast<Engine>(e);
      const int units = isa::engineHasUnits(engine) ? hw.chip.coreletsPerCore : 1;
      for (int u = 0; u < units; ++u) {
        const StreamKey key{c, e, u};
        codegen::StreamBuilder &s = pb.stream(c, engine, u);
        if (embed) {
          // Every stream meets the others here, whether or not the
          // embedding ran code on it.
          if (auto it = embedStreams.find(key); it != embedStreams.end())
            appendCode(pb, s, *embedProgram, *it->second);
          s.barrier(0, streams);
        }
        isa::Stream body;
        if (auto it = layerStreams.find(key); it != layerStreams.end()) {
          body = *it->second;
        } else {
          body.core = c;
          body.engine = engine;
          body.unit = u;
          Instr halt;
          halt.opcode = Opcode::Halt;
          body.code.push_back(halt);
          body.provenance.push_back(isa::kNoProvenance);
        }
        const uint16_t used = registersUsed(body);
        int base = 0;
        for (int r = isa::kNumRegs - 1; r >= 1 && base == 0; --r)
          if (!(used & (1u << r)))
            base = r;
        if (base == 0)
          throw UserError(SourceLoc{"config.json"},
                          "stream " + body.name() +
                              " of the layer uses every register; none is "
                              "left for the loop over the layers");
        relocate(body, start, stride, base);
        out.layerInstructions += body.code.size() - 1;
        if (body.code.size() - 1 + 2 > 65535)
          throw UserError(SourceLoc{"config.json"},
                          "stream " + body.name() + " of one layer has " +
                              std::to_string(body.code.size() - 1) +
                              " instructions, more than a loop body holds "
                              "(65,535)");
        s.li(base, static_cast<int64_t>(start));
        s.beginLoop(layers);
        appendCode(pb, s, layerProgram, body);
        s.barrier(0, streams);
        s.addi(base, base, static_cast<int64_t>(stride));
        s.endLoop();
        if (auto it = headStreams.find(key); it != headStreams.end())
          appendCode(pb, s, *headProgram, *it->second);
      }
    }
  isa::Program program = pb.finish();

  // The tensors: each piece's, the layer's own ones once per layer.
  std::vector<isa::TensorDecl> &tensors = program.tensors;
  std::set<std::string> names;
  const auto add = [&](isa::TensorDecl t, const std::string &prefix) {
    if (!names.insert(t.name).second) {
      t.name = prefix + t.name;
      SPYRE_ASSERT(names.insert(t.name).second,
                   "tensor '" + t.name + "' twice");
    }
    tensors.push_back(std::move(t));
  };
  const std::string finalOut = layer->outputs().front()->name();
  const std::string lastLayerOut = layerName(finalOut, layers - 1);
  for (const isa::TensorDecl &t : layerProgram.tensors) {
    if (t.address >= start && t.address < start + stride) {
      for (int64_t l = 0; l < layers; ++l) {
        isa::TensorDecl copy = t;
        copy.name = layerName(t.name, l);
        copy.address = t.address + static_cast<uint64_t>(l) * stride;
        add(std::move(copy), "");
      }
      continue;
    }
    if (t.address == state) {
      // The hidden state: the step's input when nothing comes before the
      // layers, the step's output when nothing comes after them.
      if (t.kind == isa::TensorKind::Input && !embed)
        add(t, "");
      if (t.kind == isa::TensorKind::Output && !head) {
        isa::TensorDecl o = t;
        o.name = lastLayerOut;
        add(std::move(o), "");
      }
      continue;
    }
    if (gathered.count(t.name))
      continue; // the embedding piece's, declared below
    add(t, "layer.");
  }
  if (embed)
    for (const isa::TensorDecl &t : embedProgram->tensors) {
      if (t.address == state) {
        if (!head)
          continue; // declared as the step's output
        isa::TensorDecl x = t;
        x.kind = isa::TensorKind::Scratch;
        add(std::move(x), "");
        continue;
      }
      if (gathered.count(t.name)) {
        isa::TensorDecl x = t; // made and read on the device
        x.kind = isa::TensorKind::Scratch;
        add(std::move(x), "");
        continue;
      }
      add(t, "embedding.");
    }
  if (head)
    for (const isa::TensorDecl &t : headProgram->tensors) {
      if (t.address == state)
        continue; // declared above, as the layers' input or the embedding's
                  // output
      add(t, "head.");
    }
  if (const std::string problem = codegen::validateProgram(program, hw);
      !problem.empty())
    SPYRE_UNREACHABLE("looped program: " + problem);
  out.program = std::move(program);
  return out;
}

} // namespace spyre::llm
