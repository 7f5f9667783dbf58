// The program builder (ProgramBuilder.h): instructions by typed field,
// streams with loops and registers, tensors, counters, and the final checks.
#include "compiler/codegen/ProgramBuilder.h"

#include "numerics/Dlf16.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace spyre::codegen {

using isa::Engine;
using isa::FieldKind;
using isa::Opcode;

// ------------------------------------------------------------ InstrBuilder

InstrBuilder::InstrBuilder(Opcode op) : desc_(&isa::instrDesc(op)) {
  instr_.opcode = op;
  given_.assign(desc_->fields.size(), false);
}

size_t InstrBuilder::index(isa::Field field) const {
  int i = isa::fieldIndex(desc_->format, field);
  SPYRE_ASSERT(i >= 0, std::string(desc_->mnemonic) + " has no field '" +
                           std::string(isa::fieldName(field)) + "'");
  return static_cast<size_t>(i);
}

void InstrBuilder::setInt(isa::Field field, int64_t value) {
  size_t i = index(field);
  const isa::FieldDesc &f = desc_->fields[i];
  SPYRE_ASSERT(!f.isAddress() && f.kind != FieldKind::Float &&
                   f.kind != FieldKind::Enum,
               std::string(desc_->mnemonic) + "." + std::string(f.name) +
                   " is not an integer field");
  if (f.kind == FieldKind::Core && value < 0)
    value = isa::kCoreSelf;
  instr_.value[i] = value;
  given_[i] = true;
}

void InstrBuilder::setAddr(isa::Field field, Addr addr) {
  size_t i = index(field);
  const isa::FieldDesc &f = desc_->fields[i];
  SPYRE_ASSERT(f.isAddress(), std::string(desc_->mnemonic) + "." +
                                  std::string(f.name) +
                                  " is not an address field");
  SPYRE_ASSERT(addr.reg >= 0 && addr.reg < isa::kNumRegs,
               "address base register r" + std::to_string(addr.reg));
  instr_.value[i] = addr.offset;
  instr_.base[i] = static_cast<uint8_t>(addr.reg);
  given_[i] = true;
}

void InstrBuilder::setFloat(isa::Field field, float value) {
  size_t i = index(field);
  SPYRE_ASSERT(desc_->fields[i].kind == FieldKind::Float,
               std::string(desc_->fields[i].name) + " is not an FP32 field");
  instr_.value[i] = std::bit_cast<uint32_t>(value);
  given_[i] = true;
}

void InstrBuilder::setEnum(isa::Field field, int64_t valueIndex) {
  size_t i = index(field);
  const isa::FieldDesc &f = desc_->fields[i];
  SPYRE_ASSERT(f.kind == FieldKind::Enum,
               std::string(f.name) + " is not an enum");
  SPYRE_ASSERT(valueIndex >= 0 &&
                   valueIndex < static_cast<int64_t>(f.enumValues.size()),
               std::string(f.name) + " has no value " +
                   std::to_string(valueIndex));
  instr_.value[i] = valueIndex;
  given_[i] = true;
}

isa::Instr InstrBuilder::build() const {
  isa::Instr out = instr_;
  for (size_t i = 0; i < desc_->fields.size(); ++i) {
    const isa::FieldDesc &f = desc_->fields[i];
    if (!given_[i]) {
      SPYRE_ASSERT(f.defaultRule != isa::DefaultRule::None,
                   std::string(desc_->mnemonic) + " needs field " +
                       std::string(f.name));
      out.value[i] = isa::defaultValueOf(*desc_, i, out.value.data());
    }
    std::string err = isa::checkFieldValue(f, out.value[i]);
    SPYRE_ASSERT(err.empty(), std::string(desc_->mnemonic) + "." +
                                  std::string(f.name) + ": " + err);
  }
  return out;
}

// ----------------------------------------------------------- StreamBuilder

StreamBuilder::StreamBuilder(Key, ProgramBuilder &owner, int core, Engine e,
                             int unit)
    : owner_(&owner) {
  stream_.core = core;
  stream_.engine = e;
  stream_.unit = unit;
}

StreamBuilder &StreamBuilder::append(const isa::Instr &in) {
  SPYRE_ASSERT(!owner_->finished_, "append after finish()");
  SPYRE_ASSERT(in.desc().runsOn(stream_.engine),
               std::string(in.desc().mnemonic) + " does not run on " +
                   stream_.name());
  stream_.code.push_back(in);
  stream_.provenance.push_back(owner_->currentOp_);
  return *this;
}

void StreamBuilder::li(int rd, int64_t value) {
  append(instr<Opcode::Li>().rd(rd).imm(value));
}

void StreamBuilder::addi(int rd, int rs, int64_t imm) {
  append(instr<Opcode::Addi>().rd(rd).rs(rs).imm(imm));
}

void StreamBuilder::signal(int counter, int64_t value, int core) {
  auto b = instr<Opcode::Signal>().counter(counter).value(value);
  if (core >= 0 && core != stream_.core)
    b.core(core);
  append(b);
}

void StreamBuilder::wait(int counter, int64_t value) {
  append(instr<Opcode::Wait>().counter(counter).value(value));
}

void StreamBuilder::barrier(int id, int64_t count) {
  append(instr<Opcode::Barrier>().id(id).count(count));
}

void StreamBuilder::beginLoop(int64_t count) {
  const hw::LimitsConfig &lim = owner_->config_.limits;
  SPYRE_ASSERT(count >= 1 && count <= lim.maxLoopCount,
               "loop count " + std::to_string(count) + " in " + name());
  SPYRE_ASSERT(loopDepth() < lim.maxLoopDepth,
               "loops nested deeper than " + std::to_string(lim.maxLoopDepth) +
                   " in " + name());
  openLoops_.push_back(stream_.code.size());
  append(instr<Opcode::Loop>().count(count).body(1));
}

void StreamBuilder::endLoop() {
  SPYRE_ASSERT(!openLoops_.empty(), "endLoop without a loop in " + name());
  size_t at = openLoops_.back();
  openLoops_.pop_back();
  size_t body = stream_.code.size() - at - 1;
  if (body == 0) {
    // Nothing to repeat: the loop goes away.
    stream_.code.pop_back();
    stream_.provenance.pop_back();
    return;
  }
  SPYRE_ASSERT(body <= 65535, "loop body of " + std::to_string(body) +
                                  " instructions in " + name());
  isa::Instr &loop = stream_.code[at];
  loop.value[loop.position(isa::Field::Body)] = static_cast<int64_t>(body);
}

int StreamBuilder::allocReg() {
  for (int r = 1; r < isa::kNumRegs; ++r)
    if (!(usedRegs_ & (1u << r))) {
      usedRegs_ = static_cast<uint16_t>(usedRegs_ | (1u << r));
      return r;
    }
  SPYRE_UNREACHABLE("no free register left in " + name());
}

void StreamBuilder::freeReg(int reg) {
  SPYRE_ASSERT(reg > 0 && reg < isa::kNumRegs && (usedRegs_ & (1u << reg)),
               "freeing register r" + std::to_string(reg) + " not held");
  usedRegs_ = static_cast<uint16_t>(usedRegs_ & ~(1u << reg));
}

// ---------------------------------------------------------- ProgramBuilder

ProgramBuilder::ProgramBuilder(const hw::HwConfig &config, std::string name)
    : config_(config) {
  // A model's names are untrusted; a program file holds no control
  // character (isa::hasControlChar).
  program_.name = isa::hasControlChar(name) ? isa::printableName(name) : std::move(name);
  program_.configFingerprint = config.fingerprint();
  counters_.assign(static_cast<size_t>(config.chip.cores),
                   std::vector<CounterState>(
                       static_cast<size_t>(config.limits.syncCountersPerCore),
                       CounterState::Free));
  lxHighWater_.assign(static_cast<size_t>(config.chip.cores), 0);
}

ProgramBuilder::~ProgramBuilder() = default;

void ProgramBuilder::setAllocator(uint64_t next, uint64_t alignSticks) {
  SPYRE_ASSERT(alignSticks >= 1, "alignment of zero sticks");
  nextAddress_ = next;
  align_ = alignSticks;
}

uint64_t ProgramBuilder::allocate(uint64_t sticks) {
  uint64_t addr = (nextAddress_ + align_ - 1) / align_ * align_;
  nextAddress_ = addr + sticks;
  SPYRE_ASSERT(nextAddress_ * isa::kStickBytes <=
                   static_cast<uint64_t>(config_.memory.sizeBytes),
               "device memory exhausted");
  return addr;
}

const isa::TensorDecl &
ProgramBuilder::addTensorAt(std::string name, isa::TensorKind kind,
                            isa::DType dtype, std::vector<int64_t> hostShape,
                            uint64_t address) {
  SPYRE_ASSERT(findTensor(name) == nullptr, "tensor '" + name + "' twice");
  SPYRE_ASSERT(!hostShape.empty() && hostShape.size() <= 8,
               "tensor '" + name + "' needs 1 to 8 dims");
  for (int64_t d : hostShape)
    SPYRE_ASSERT(d >= 1, "tensor '" + name + "' has an empty dim");
  isa::TensorDecl t;
  t.name = std::move(name);
  t.kind = kind;
  t.dtype = dtype;
  t.hostShape = std::move(hostShape);
  t.deviceShape = isa::deviceShapeOf(t.hostShape, dtype);
  t.sizeSticks = isa::sticksOf(t.deviceShape);
  t.address = address;
  if (kind == isa::TensorKind::Const && !constWithoutData_)
    t.data.assign(t.sizeSticks * isa::kStickBytes, 0);
  tensors_.push_back(std::move(t));
  return tensors_.back();
}

const isa::TensorDecl &
ProgramBuilder::addTensor(std::string name, isa::TensorKind kind,
                          isa::DType dtype, std::vector<int64_t> hostShape) {
  uint64_t sticks = isa::sticksOf(isa::deviceShapeOf(hostShape, dtype));
  uint64_t address = allocate(sticks);
  return addTensorAt(std::move(name), kind, dtype, std::move(hostShape),
                     address);
}

const isa::TensorDecl &
ProgramBuilder::addConst(std::string name, isa::DType dtype,
                         std::vector<int64_t> hostShape,
                         const std::vector<float> &values) {
  SPYRE_ASSERT(values.size() == isa::elementCount(hostShape),
               "constant '" + name + "' has " + std::to_string(values.size()) +
                   " values for " +
                   std::to_string(isa::elementCount(hostShape)) + " elements");
  const isa::TensorDecl &decl =
      addTensor(std::move(name), isa::TensorKind::Const, dtype, hostShape);
  isa::TensorDecl &t = tensors_.back();
  for (size_t i = 0; i < values.size(); ++i) {
    uint8_t *p = t.data.data() + isa::deviceByteOffset(t.hostShape, dtype, i);
    float v = values[i];
    switch (dtype) {
    case isa::DType::Dl16: {
      uint16_t c = dlf16::fromFloat(v);
      std::memcpy(p, &c, 2);
      break;
    }
    case isa::DType::Fp32:
      std::memcpy(p, &v, 4);
      break;
    case isa::DType::Int8: {
      auto c = static_cast<int8_t>(std::lround(v));
      std::memcpy(p, &c, 1);
      break;
    }
    case isa::DType::Int32: {
      auto c = static_cast<int32_t>(std::lround(v));
      std::memcpy(p, &c, 4);
      break;
    }
    }
  }
  return decl;
}

const isa::TensorDecl &
ProgramBuilder::addConstWithoutData(std::string name, isa::DType dtype,
                                    std::vector<int64_t> hostShape) {
  constWithoutData_ = true;
  const isa::TensorDecl &decl = addTensor(
      std::move(name), isa::TensorKind::Const, dtype, std::move(hostShape));
  constWithoutData_ = false;
  return decl;
}

const isa::TensorDecl *ProgramBuilder::findTensor(std::string_view name) const {
  for (const isa::TensorDecl &t : tensors_)
    if (t.name == name)
      return &t;
  return nullptr;
}

uint64_t ProgramBuilder::zeroSticks(int64_t sticks) {
  constexpr int64_t kZeroSticks = 64;
  SPYRE_ASSERT(sticks >= 0 && sticks <= kZeroSticks,
               "at most 64 zero sticks are shared");
  if (zerosName_.empty()) {
    zerosName_ = "__zeros";
    // FP32 zeros: the same bytes as DL16 zeros in half the values, so the
    // disassembly lists fewer of them.
    addTensor(zerosName_, isa::TensorKind::Const, isa::DType::Fp32,
              {kZeroSticks, 32});
  }
  return findTensor(zerosName_)->address;
}

StreamBuilder &ProgramBuilder::stream(int core, Engine engine, int unit) {
  SPYRE_ASSERT(core >= 0 && core < config_.chip.cores,
               "core " + std::to_string(core) + " beyond chip.cores");
  SPYRE_ASSERT(isa::engineHasUnits(engine)
                   ? unit >= 0 && unit < config_.chip.coreletsPerCore
                   : unit == 0,
               "unit " + std::to_string(unit) + " of " +
                   std::string(isa::engineName(engine)));
  auto key = std::tuple(core, static_cast<int>(engine), unit);
  auto it = streams_.find(key);
  if (it == streams_.end())
    it = streams_
             .emplace(key, std::make_unique<StreamBuilder>(
                               StreamBuilder::Key(), *this, core, engine, unit))
             .first;
  return *it->second;
}

bool ProgramBuilder::hasStream(int core, Engine engine, int unit) const {
  return streams_.count(std::tuple(core, static_cast<int>(engine), unit)) != 0;
}

void ProgramBuilder::setOp(std::string op) {
  if (op.empty()) {
    currentOp_ = isa::kNoProvenance;
    return;
  }
  if (isa::hasControlChar(op))
    op = isa::printableName(op);
  auto it = std::find(program_.strings.begin(), program_.strings.end(), op);
  if (it != program_.strings.end()) {
    currentOp_ = static_cast<uint32_t>(it - program_.strings.begin());
    return;
  }
  program_.strings.push_back(std::move(op));
  currentOp_ = static_cast<uint32_t>(program_.strings.size() - 1);
}

int ProgramBuilder::allocCounter(int core) {
  std::vector<CounterState> &st = counters_[static_cast<size_t>(core)];
  for (size_t c = 0; c < st.size(); ++c)
    if (st[c] == CounterState::Free) {
      st[c] = CounterState::Held;
      return static_cast<int>(c);
    }
  throw SyncCountersExhausted{core, static_cast<int>(st.size())};
}

bool ProgramBuilder::countersUsed(int core) const {
  for (CounterState c : counters_[static_cast<size_t>(core)])
    if (c != CounterState::Free)
      return true;
  return false;
}

void ProgramBuilder::releaseCounter(int core, int counter) {
  std::vector<CounterState> &st = counters_[static_cast<size_t>(core)];
  SPYRE_ASSERT(counter >= 0 && static_cast<size_t>(counter) < st.size() &&
                   st[static_cast<size_t>(counter)] == CounterState::Held,
               "releasing counter c" + std::to_string(counter) + " not held");
  st[static_cast<size_t>(counter)] = CounterState::Released;
}

void ProgramBuilder::barrierAll() {
  // Every stream the chip can have exists from the first barrier on: a
  // stream created later would start at time zero, not behind the
  // barriers, and could take tokens of an earlier kernel's counters or
  // arrive at a barrier that is still pending for others.
  for (int c = 0; c < config_.chip.cores; ++c) {
    stream(c, Engine::DmaLoad);
    stream(c, Engine::DmaStore);
    stream(c, Engine::Ring);
    for (int u = 0; u < config_.chip.coreletsPerCore; ++u) {
      stream(c, Engine::Pt, u);
      stream(c, Engine::Sfu, u);
    }
  }
  auto count = static_cast<int64_t>(streams_.size());
  for (auto &[key, s] : streams_)
    s->barrier(0, count);
  // Every stream is past its last wait: released counters hold no tokens
  // any stream could still be waiting for.
  for (std::vector<CounterState> &st : counters_)
    for (CounterState &c : st)
      if (c == CounterState::Released)
        c = CounterState::Free;
}

int64_t ProgramBuilder::lxHighWater(int core) const {
  return lxHighWater_[static_cast<size_t>(core)];
}

void ProgramBuilder::noteLxUse(int core, int64_t endStick) {
  SPYRE_ASSERT(endStick <= config_.lxSticks(),
               "LX of core " + std::to_string(core) +
                   " over capacity: " + std::to_string(endStick) + " sticks");
  int64_t &hw = lxHighWater_[static_cast<size_t>(core)];
  hw = std::max(hw, endStick);
}

isa::Program ProgramBuilder::finish() {
  SPYRE_ASSERT(!finished_, "finish() called twice");
  for (auto &[key, s] : streams_) {
    SPYRE_ASSERT(s->openLoops_.empty(), "open loop at the end of " + s->name());
    currentOp_ = isa::kNoProvenance;
    s->append(instr<Opcode::Halt>());
    program_.streams.push_back(std::move(s->stream_));
  }
  program_.tensors.assign(std::make_move_iterator(tensors_.begin()),
                          std::make_move_iterator(tensors_.end()));
  finished_ = true;
  std::string problem = validateProgram(program_, config_);
  SPYRE_ASSERT(problem.empty(), "generated program: " + problem);
  return std::move(program_);
}

// -------------------------------------------------------------- validation

namespace {

std::string checkStream(const isa::Stream &s, const isa::Program &p,
                        const hw::HwConfig &config) {
  const std::string where = s.name() + ", instruction ";
  if (s.code.empty() || s.code.back().opcode != Opcode::Halt)
    return s.name() + " does not end with halt";
  if (s.provenance.size() != s.code.size())
    return s.name() + " has provenance for " +
           std::to_string(s.provenance.size()) + " of " +
           std::to_string(s.code.size()) + " instructions";
  if (isa::engineHasUnits(s.engine) &&
      (s.unit < 0 || s.unit >= config.chip.coreletsPerCore))
    return s.name() + " is on a corelet the config does not have";
  if (std::string loops = isa::checkLoops(s); !loops.empty())
    return s.name() + ", " + loops;
  std::vector<size_t> open;
  for (size_t i = 0; i < s.code.size(); ++i) {
    const isa::Instr &in = s.code[i];
    const isa::InstrDesc &d = in.desc();
    const std::string at =
        where + std::to_string(i) + " (" + std::string(d.mnemonic) + "): ";
    while (!open.empty() && open.back() <= i)
      open.pop_back();
    if (!d.runsOn(s.engine))
      return at + "does not run on this engine";
    if (s.provenance[i] != isa::kNoProvenance &&
        s.provenance[i] >= p.strings.size())
      return at + "provenance index out of range";
    if (in.opcode == Opcode::Loop) {
      open.push_back(i + 1 + static_cast<size_t>(in.value[1]));
      if (static_cast<int>(open.size()) > config.limits.maxLoopDepth)
        return at + "loops nested deeper than limits.max_loop_depth";
    }
    for (size_t f = 0; f < d.fields.size(); ++f) {
      const isa::FieldDesc &fd = d.fields[f];
      int64_t v = in.value[f];
      if (std::string err = isa::checkFieldValue(fd, v); !err.empty())
        return at + std::string(fd.name) + " " + err;
      if (fd.limit == isa::Limit::None)
        continue;
      int64_t bound = isa::limitBound(fd.limit, config);
      bool ok = true;
      switch (fd.limit) {
      case isa::Limit::LxSticks:
      case isa::Limit::MemSticks:
        ok = (v < 0 ? -v : v) < bound && !(in.base[f] == 0 && v < 0);
        break;
      case isa::Limit::Cores:
        ok = v == isa::kCoreSelf || v < bound;
        break;
      default:
        ok = v < bound;
        break;
      }
      if (!ok)
        return at + std::string(fd.name) + " = " + std::to_string(v) +
               " breaks " + std::string(isa::limitDescription(fd.limit));
    }
  }
  return "";
}

} // namespace

std::string validateProgram(const isa::Program &program,
                            const hw::HwConfig &config) {
  for (size_t i = 0; i < program.streams.size(); ++i) {
    const isa::Stream &s = program.streams[i];
    if (i > 0 && !isa::streamLess(program.streams[i - 1], s))
      return "stream " + s.name() + " is out of order or appears twice";
    if (s.core < 0 || s.core >= config.chip.cores)
      return "stream " + s.name() + " is on a core the config does not have";
    if (std::string err = checkStream(s, program, config); !err.empty())
      return err;
  }
  std::vector<const isa::TensorDecl *> byAddress;
  const auto memSticks =
      static_cast<uint64_t>(config.memory.sizeBytes / isa::kStickBytes);
  for (const isa::TensorDecl &t : program.tensors) {
    if (t.deviceShape != isa::deviceShapeOf(t.hostShape, t.dtype) ||
        t.sizeSticks != isa::sticksOf(t.deviceShape))
      return "tensor '" + t.name + "' does not follow the stick layout";
    if (t.address + t.sizeSticks > memSticks)
      return "tensor '" + t.name + "' lies outside device memory";
    byAddress.push_back(&t);
  }
  std::sort(byAddress.begin(), byAddress.end(),
            [](const isa::TensorDecl *a, const isa::TensorDecl *b) {
              return a->address < b->address;
            });
  for (size_t i = 1; i < byAddress.size(); ++i)
    if (byAddress[i - 1]->address + byAddress[i - 1]->sizeSticks >
            byAddress[i]->address &&
        !isa::replacesInPlace(*byAddress[i - 1], *byAddress[i]))
      return "tensor '" + byAddress[i - 1]->name + "' overlaps tensor '" +
             byAddress[i]->name + "'";
  return "";
}

} // namespace spyre::codegen
