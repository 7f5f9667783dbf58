// The schedule checks (ScheduleChecker.h).
#include "sim/core/ScheduleChecker.h"

namespace spyre::sim {

ScheduleChecker::ScheduleChecker(const hw::HwConfig &config,
                                 const isa::Program &program,
                                 FindingLog &findings)
    : program_(program), findings_(findings),
      hb_(static_cast<int>(program.streams.size())),
      shadow_(config.chip.cores, config.lxSticks()) {}

VectorClock ScheduleChecker::takeClock(int stream) {
  // Signals happen often; their clocks are recycled once their tokens are
  // taken, so checking does not allocate per signal.
  VectorClock vc;
  if (!clockPool_.empty()) {
    vc = std::move(clockPool_.back());
    clockPool_.pop_back();
  }
  hb_.releaseInto(stream, vc);
  return vc;
}

void ScheduleChecker::shadowAccess(int core, const Region &r, bool write,
                                   const Epoch &e) {
  // Run by run in forEachRun's order (i2 outer, i1 inner), one row of n1
  // runs per call.
  for (int64_t i2 = 0; i2 < r.n2; ++i2)
    shadow_.accessRuns(core, r.base + i2 * r.s2, r.run, r.n1, r.s1, write, e,
                       hb_, conflicts_);
}

void ScheduleChecker::accessed(const StreamState &st,
                               std::span<const Footprint> fp,
                               bool deferLxWrites) {
  for (const Footprint &f : fp) {
    if (f.deviceMemory) {
      if (f.write) {
        f.region.forEachRun([&](int64_t start, int64_t len) {
          written_.add(start, start + len);
        });
        continue;
      }
      bool reported = false;
      f.region.forEachRun([&](int64_t start, int64_t len) {
        if (reported)
          return;
        if (auto gap = written_.firstGap(start, start + len)) {
          std::string what = "load of device memory never written";
          for (const isa::TensorDecl &t : program_.tensors)
            if (static_cast<int64_t>(t.address) <= gap->first &&
                gap->first < static_cast<int64_t>(t.address + t.sizeSticks)) {
              what += " (" + std::string(isa::tensorKindName(t.kind)) +
                      " tensor '" + t.name + "')";
              break;
            }
          findings_.report(FindingKind::MemUninitRead, &st, st.time, what,
                           sticksText("mem", gap->first, gap->second - 1));
          reported = true;
        }
      });
      continue;
    }
    // A receive's write is checked when the data arrives, after it acquired
    // the sender's clock (received()).
    if (f.write && deferLxWrites)
      continue;
    conflicts_.clear();
    Epoch e = hb_.epoch(st.index, st.pc);
    shadowAccess(st.core, f.region, f.write, e);
    bool raced = false, uninit = false;
    for (const AccessConflict &c : conflicts_) {
      if (c.kind == AccessConflict::Kind::Race && !raced) {
        raced = true;
        findings_.report(
            FindingKind::LxRace, &st, st.time,
            std::string(f.write ? "write" : "read") +
                " races with an earlier " +
                (c.otherWasWrite ? "write" : "read") +
                " not ordered by signal/wait, barrier or program order",
            sticksText("lx", c.firstStick, c.lastStick),
            findings_.describeInstr(c.other.stream, c.other.instr));
      } else if (c.kind == AccessConflict::Kind::UninitRead && !uninit) {
        uninit = true;
        findings_.report(FindingKind::LxUninitRead, &st, st.time,
                         "read of LX never written",
                         sticksText("lx", c.firstStick, c.lastStick));
      }
    }
  }
}

void ScheduleChecker::received(const StreamState &receiver, int core,
                               const Region &region, Cycle at) {
  conflicts_.clear();
  Epoch e = hb_.epoch(receiver.index, receiver.pc);
  shadowAccess(core, region, true, e);
  for (const AccessConflict &c : conflicts_)
    if (c.kind == AccessConflict::Kind::Race) {
      findings_.report(FindingKind::LxRace, &receiver, at,
                       "received data races with an earlier access not "
                       "ordered by signal/wait, barrier or program order",
                       sticksText("lx", c.firstStick, c.lastStick),
                       findings_.describeInstr(c.other.stream, c.other.instr));
      return;
    }
}

void ScheduleChecker::hostReads(const StreamState &st,
                                const isa::HostOpDecl &op) {
  for (uint32_t t : op.inputs) {
    const isa::TensorDecl &d = program_.tensors[t];
    const auto first = static_cast<int64_t>(d.address);
    const auto last = first + static_cast<int64_t>(d.sizeSticks);
    if (auto gap = written_.firstGap(first, last)) {
      findings_.report(FindingKind::MemUninitRead, &st, st.time,
                       "host op '" + op.name +
                           "' reads device memory never written (" +
                           std::string(isa::tensorKindName(d.kind)) +
                           " tensor '" + d.name + "')",
                       sticksText("mem", gap->first, gap->second - 1));
      return;
    }
  }
}

} // namespace spyre::sim
