// Engine cycle costs from the config (see CostModel.h).
#include "sim/timing/CostModel.h"

#include "isa/InstrTable.h"
#include "support/Diagnostic.h"

#include <algorithm>
#include <cmath>

namespace spyre::sim {

CostModel::CostModel(const hw::HwConfig &config)
    : pt_(config.pt), sfu_(config.sfu),
      dmaIssueLatency_(static_cast<Cycle>(config.dma.issueLatencyCycles)),
      dmaRunSetup_(static_cast<Cycle>(config.dma.runSetupCycles)),
      dmaMaxOutstanding_(config.dma.maxOutstanding) {
  SPYRE_ASSERT(pt_.peRows > 0 && pt_.peCols > 0 && pt_.simdWidth > 0 &&
                   pt_.passRows > 0 && pt_.fullRatePasses > 0 &&
                   pt_.int8Speedup > 0 && pt_.int4Speedup > 0 &&
                   pt_.setupCycles >= 0,
               "PT figures out of range");
  SPYRE_ASSERT(sfu_.arraysPerCorelet > 0 && sfu_.dl16Lanes > 0 &&
                   sfu_.fp32Lanes > 0 && sfu_.simpleCyclesPerStick >= 0 &&
                   sfu_.transcendentalCyclesPerStick >= 0 &&
                   sfu_.reduceCyclesPerStick >= 0 &&
                   sfu_.pipelineLatencyCycles >= 0 &&
                   sfu_.transcendentalLatencyCycles >= 0,
               "SFU figures out of range");
  SPYRE_ASSERT(config.dma.issueLatencyCycles >= 0 &&
                   config.dma.runSetupCycles >= 0 &&
                   config.dma.maxOutstanding > 0,
               "DMA figures out of range");
}

uint64_t CostModel::ptMacsPerCycle(PtPrecision precision) const {
  uint64_t dl16 = static_cast<uint64_t>(pt_.peRows) *
                  static_cast<uint64_t>(pt_.peCols) *
                  static_cast<uint64_t>(pt_.simdWidth);
  switch (precision) {
  case PtPrecision::Dl16:
    return dl16;
  case PtPrecision::Int8:
    return dl16 * static_cast<uint64_t>(pt_.int8Speedup);
  case PtPrecision::Int4:
    return dl16 * static_cast<uint64_t>(pt_.int4Speedup);
  }
  SPYRE_UNREACHABLE("unknown PT precision");
}

uint64_t CostModel::ptPasses(uint64_t m) const {
  const auto rows = static_cast<uint64_t>(pt_.passRows);
  return (m + rows - 1) / rows;
}

double CostModel::ptEfficiency(uint64_t m) const {
  SPYRE_ASSERT(m > 0, "PT efficiency of an empty M");
  const double ratio = static_cast<double>(ptPasses(m)) /
                       static_cast<double>(pt_.fullRatePasses);
  return std::min(1.0, std::sqrt(ratio));
}

Cycle CostModel::ptCycles(uint64_t m, uint64_t k, uint64_t n,
                          PtPrecision precision) const {
  SPYRE_ASSERT(m > 0 && k > 0 && n > 0, "PT product with an empty dimension");
  const double macs =
      static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
  const double rate =
      static_cast<double>(ptMacsPerCycle(precision)) * ptEfficiency(m);
  return static_cast<Cycle>(pt_.setupCycles) +
         static_cast<Cycle>(std::ceil(macs / rate));
}

Cycle CostModel::sfuCyclesPerStick(SfuClass cls) const {
  switch (cls) {
  case SfuClass::Simple:
    return static_cast<Cycle>(sfu_.simpleCyclesPerStick);
  case SfuClass::Transcendental:
    return static_cast<Cycle>(sfu_.transcendentalCyclesPerStick);
  case SfuClass::Reduce:
    return static_cast<Cycle>(sfu_.reduceCyclesPerStick);
  }
  SPYRE_UNREACHABLE("unknown SFU class");
}

Cycle CostModel::sfuLatencyCycles(SfuClass cls) const {
  return static_cast<Cycle>(cls == SfuClass::Transcendental
                                ? sfu_.transcendentalLatencyCycles
                                : sfu_.pipelineLatencyCycles);
}

uint64_t CostModel::sfuElementsPerPass(SfuFormat fmt) const {
  const int lanes = fmt == SfuFormat::Fp32 ? sfu_.fp32Lanes : sfu_.dl16Lanes;
  return static_cast<uint64_t>(sfu_.arraysPerCorelet) *
         static_cast<uint64_t>(lanes);
}

Cycle CostModel::sfuCycles(SfuClass cls, uint64_t sticks,
                           SfuFormat fmt) const {
  const uint64_t perStick =
      fmt == SfuFormat::Fp32 ? isa::kStickBytes / 4 : isa::kStickBytes / 2;
  const uint64_t perPass = sfuElementsPerPass(fmt);
  const uint64_t passes = (sticks * perStick + perPass - 1) / perPass;
  return sfuLatencyCycles(cls) + passes * sfuCyclesPerStick(cls);
}

} // namespace spyre::sim
