// The hardware config: the built-in default, derived values, the canonical
// form and the fingerprint.
#include "hw/HwConfig.h"
#include "hw/ConfigSchema.h"
#include "support/Hash.h"
#include "testlib/Golden.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <regex>
#include <set>

using namespace spyre;
using namespace spyre::hw;

namespace {

HwConfig parseOk(const std::string &text, const std::string &name = "t.yaml") {
  HwConfig config;
  DiagnosticEngine diags;
  EXPECT_TRUE(parseConfig(text, name, config, diags)) << diags.str();
  return config;
}

std::string replaceOnce(std::string text, const std::string &from,
                        const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not found";
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

} // namespace

TEST(BuiltinConfig, TextIsConfigsSpyreYamlByteForByte) {
  EXPECT_EQ(std::string(builtinConfigText()),
            test::readSource("configs/spyre.yaml"));
}

TEST(BuiltinConfig, EqualsConfigsSpyreYamlLoadedFromDisk) {
  HwConfig fromDisk = loadConfigFile(test::srcPath("configs/spyre.yaml"));
  EXPECT_EQ(toYaml(fromDisk, false), toYaml(builtinConfig(), false));
  EXPECT_EQ(fromDisk.fingerprint(), builtinConfig().fingerprint());
}

TEST(BuiltinConfig, HoldsTheFiguresOfDesignSection1) {
  const HwConfig &c = builtinConfig();
  EXPECT_EQ(c.name, "spyre");
  EXPECT_EQ(c.chip.cores, 32);
  EXPECT_EQ(c.chip.clockGhz, 1.5);
  EXPECT_EQ(c.chip.coreletsPerCore, 2);
  EXPECT_EQ(c.chip.stickBytes, 128);
  EXPECT_EQ(c.pt.peRows, 8);
  EXPECT_EQ(c.pt.peCols, 8);
  EXPECT_EQ(c.pt.simdWidth, 8);
  EXPECT_EQ(c.pt.passRows, 8);
  EXPECT_EQ(c.pt.fullRatePasses, 8);
  EXPECT_EQ(c.pt.int8Speedup, 2);
  EXPECT_EQ(c.pt.int4Speedup, 4);
  EXPECT_EQ(c.sfu.simpleCyclesPerStick, 1);
  EXPECT_EQ(c.sfu.transcendentalCyclesPerStick, 1);
  EXPECT_EQ(c.sfu.transcendentalLatencyCycles, 24);
  EXPECT_EQ(c.sfu.arraysPerCorelet, 2);
  EXPECT_EQ(c.sfu.dl16Lanes, 64);
  EXPECT_EQ(c.sfu.fp32Lanes, 64);
  EXPECT_EQ(c.lx.sizeBytes, 2 * 1024 * 1024);
  EXPECT_EQ(c.lx.readSticksPerCycle, 1);
  EXPECT_EQ(c.lx.writeSticksPerCycle, 1);
  EXPECT_EQ(c.memory.sizeBytes, int64_t{128} << 30);
  EXPECT_EQ(c.memory.peakGBps, 204.8);
  EXPECT_EQ(c.memory.sustainedReadGBps, 150.0);
  EXPECT_EQ(c.memory.sustainedMixedGBps, 105.0);
  EXPECT_EQ(c.memory.turnaroundCycles, 0); // the mixed figure includes it
  EXPECT_EQ(c.ring.bytesPerCycle, 128);
  EXPECT_EQ(c.ring.hopLatencyCycles, 2);
  EXPECT_EQ(c.reduceRing.bytesPerCycle, 32);
  EXPECT_EQ(c.limits.tensorSpanBytesPerCore, 256 * 1024 * 1024);
  EXPECT_EQ(c.limits.maxLoopCount, 65535);
  EXPECT_EQ(c.limits.maxLoopDepth, 4);
  EXPECT_EQ(c.limits.syncCountersPerCore, 32);
  EXPECT_EQ(c.limits.barriers, 16);
  // PCIe Gen5 x16: 32 GT/s * 16 lanes * 128/130 / 8 bits = 63.0 GB/s.
  EXPECT_EQ(c.host.pcieGBps, 63.0);
}

TEST(BuiltinConfig, DerivedValues) {
  const HwConfig &c = builtinConfig();
  EXPECT_EQ(c.ptMacsPerCycle(), 512);
  EXPECT_EQ(c.lxSticks(), 16384);
  // The published card peak: 98.3 DL16 TFLOPS = 98304 GFLOP/s.
  double gflops = c.chip.cores * c.chip.coreletsPerCore * c.ptMacsPerCycle() *
                  2 * c.chip.clockGhz;
  EXPECT_EQ(gflops, 98304.0);
}

TEST(ConfigFingerprint, IgnoresKeyOrderCommentsAndNumberSpelling) {
  HwConfig reordered =
      parseOk(test::readSource("tests/hw/good/reordered.yaml"));
  EXPECT_EQ(reordered.fingerprint(), builtinConfig().fingerprint());
  EXPECT_EQ(toYaml(reordered, true), toYaml(builtinConfig(), true));
}

TEST(ConfigFingerprint, ChangesWhenAValueInTheFileChanges) {
  std::string text = test::readSource("configs/spyre.yaml");
  HwConfig changed =
      parseOk(replaceOnce(text, "  cores: 32\n", "  cores: 16\n"));
  EXPECT_NE(changed.fingerprint(), builtinConfig().fingerprint());
  HwConfig clock =
      parseOk(replaceOnce(text, "clock_ghz: 1.5\n", "clock_ghz: 1.5000001\n"));
  EXPECT_NE(clock.fingerprint(), builtinConfig().fingerprint());
}

TEST(ConfigFingerprint, EveryParameterCountsAndNoTwoChangesCollide) {
  std::set<uint64_t> seen{builtinConfig().fingerprint()};
  for (const ParamInfo &p : configSchema()) {
    HwConfig c = builtinConfig();
    ParamValue v = p.field.get(c);
    if (auto *i = std::get_if<int64_t>(&v))
      *i += 1;
    else if (auto *d = std::get_if<double>(&v))
      *d = std::nextafter(*d, 1e300); // the smallest possible change
    else
      std::get<std::string>(v) += "x";
    p.field.set(c, v);
    EXPECT_TRUE(seen.insert(c.fingerprint()).second) << p.path;
  }
}

TEST(ConfigFingerprint, IsFnv1aOfTheCanonicalTextPrintedAsHex) {
  const HwConfig &c = builtinConfig();
  EXPECT_EQ(c.fingerprint(), fnv1a64(toYaml(c, false)));
  EXPECT_TRUE(std::regex_match(fingerprintString(c.fingerprint()),
                               std::regex("0x[0-9a-f]{16}")));
  EXPECT_EQ(fingerprintString(0xab), "0x00000000000000ab");
  EXPECT_EQ(fingerprintString(0xfedcba9876543210ULL), "0xfedcba9876543210");
}

TEST(CanonicalYaml, PrintsDoublesAsShortestRoundTripDecimal) {
  struct Case {
    double value;
    const char *text;
  };
  const Case cases[] = {{1.5, "1.5"},      {150.0, "150.0"},
                        {0.1, "0.1"},      {1.0 / 3.0, "0.3333333333333333"},
                        {204.8, "204.8"},  {1e8, "1e+08"},
                        {0.0125, "0.0125"}};
  for (const Case &k : cases) {
    // host.host_gflops takes part in no rule between keys, so any value in
    // its range is a valid config.
    HwConfig c = builtinConfig();
    c.host.hostGflops = k.value;
    std::string text = toYaml(c, false);
    EXPECT_NE(text.find(std::string("  host_gflops: ") + k.text + "\n"),
              std::string::npos)
        << k.text;
    // Read back: the very same double, bit for bit.
    HwConfig back = parseOk(text);
    EXPECT_EQ(std::memcmp(&back.host.hostGflops, &k.value, sizeof(double)), 0)
        << k.text;
  }
}

TEST(CanonicalYaml, ListsEveryKeyOnceInSchemaOrder) {
  std::string text = toYaml(builtinConfig(), false);
  size_t pos = 0;
  for (const ParamInfo &p : configSchema()) {
    std::string leaf(p.path.substr(p.path.find('.') + 1));
    size_t at = text.find(leaf + ": ", pos);
    ASSERT_NE(at, std::string::npos) << p.path;
    pos = at;
  }
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'),
            static_cast<long>(configSchema().size() + configSections().size()));
  EXPECT_EQ(text.find('#'), std::string::npos);
}

TEST(CanonicalYaml, CommentedFormParsesBackToTheSameConfig) {
  std::string shown = toYaml(builtinConfig(), true);
  EXPECT_NE(shown.find("# fingerprint: " +
                       fingerprintString(builtinConfig().fingerprint()) + "\n"),
            std::string::npos);
  HwConfig back = parseOk(shown);
  EXPECT_EQ(back.fingerprint(), builtinConfig().fingerprint());
  EXPECT_EQ(toYaml(back, true), shown);
}

TEST(ConfigOptionalKeys, TakeTheBuiltinValueWhenLeftOut) {
  std::string text = toYaml(builtinConfig(), false);
  text = replaceOnce(text, "  setup_cycles: 8\n", "");
  text = replaceOnce(text, "  latency_cycles: 150\n", "");
  HwConfig c = parseOk(text);
  EXPECT_EQ(c.pt.setupCycles, builtinConfig().pt.setupCycles);
  EXPECT_EQ(c.memory.latencyCycles, builtinConfig().memory.latencyCycles);
  EXPECT_EQ(c.fingerprint(), builtinConfig().fingerprint());

  HwConfig other =
      parseOk(replaceOnce(toYaml(builtinConfig(), false), "  setup_cycles: 8\n",
                          "  setup_cycles: 0\n"));
  EXPECT_EQ(other.pt.setupCycles, 0);
}

TEST(ValidateConfig, ChecksConfigsBuiltInCodeAndNamesTheKey) {
  HwConfig c = builtinConfig();
  DiagnosticEngine ok;
  EXPECT_TRUE(validateConfig(c, "sweep", ok));
  EXPECT_FALSE(ok.hasErrors());

  c.lx.sizeBytes = 1000;
  c.memory.sustainedMixedGBps = 151;
  DiagnosticEngine diags;
  EXPECT_FALSE(validateConfig(c, "sweep", diags));
  EXPECT_EQ(diags.str(),
            "sweep: error: at 'lx.size_bytes': 1000 is not a whole number of "
            "128-byte sticks\n"
            "sweep: error: at 'memory.sustained_mixed_gb_per_s': 151.0 GB/s "
            "is above memory.sustained_read_gb_per_s (150.0 GB/s); "
            "turnarounds make mixed traffic slower, not faster\n");
}

TEST(ConfigSchema, KeysAreUniqueSnakeCaseAndSectionsKnown) {
  std::set<std::string_view> paths;
  for (const ParamInfo &p : configSchema()) {
    EXPECT_TRUE(paths.insert(p.path).second) << p.path;
    EXPECT_TRUE(std::regex_match(std::string(p.path),
                                 std::regex("[a-z][a-z0-9_]*(\\.[a-z0-9_]+)?")))
        << p.path;
    EXPECT_EQ(findParam(p.path), &p);
    // Every figure but the name says where it comes from.
    EXPECT_EQ(p.source.empty(), p.path == "name") << p.path;
  }
  for (const SectionInfo &s : configSections())
    EXPECT_EQ(findSection(s.name), &s);
  EXPECT_EQ(findParam("chip.nope"), nullptr);
}

namespace {

/// setParam's usage error for `key` set to `value`, or "no error".
std::string setParamError(const std::string &key, const ParamValue &value) {
  HwConfig c = builtinConfig();
  try {
    setParam(c, key, value, "Config.set");
  } catch (const UserError &e) {
    EXPECT_EQ(e.exitCode(), ExitCode::Usage);
    return e.diagnostic().str();
  }
  return "no error";
}

} // namespace

TEST(SetParam, ConvertsToTheParameterType) {
  HwConfig c = builtinConfig();
  setParam(c, "lx.size_bytes", ParamValue(int64_t{1} << 20), "Config.set");
  EXPECT_EQ(c.lx.sizeBytes, int64_t{1} << 20);
  // A number key takes an integer as the double it is.
  setParam(c, "chip.clock_ghz", ParamValue(int64_t{2}), "Config.set");
  EXPECT_EQ(c.chip.clockGhz, 2.0);
  setParam(c, "name", ParamValue(std::string("small")), "Config.set");
  EXPECT_EQ(c.name, "small");
}

TEST(SetParam, RefusesUnknownKeysAndWrongTypes) {
  EXPECT_EQ(setParamError("lx.size", ParamValue(int64_t{1})),
            "Config.set: error: at 'lx.size': unknown config key (keys as "
            "`spyre config show` prints them, e.g. lx.size_bytes)");
  EXPECT_EQ(setParamError("chip.cores", ParamValue(2.5)),
            "Config.set: error: at 'chip.cores': takes an integer, got 2.5");
  EXPECT_EQ(setParamError("chip.cores", ParamValue(int64_t{1} << 40)),
            "Config.set: error: at 'chip.cores': 1099511627776 does not fit "
            "in a 32-bit integer");
  EXPECT_EQ(setParamError("chip.clock_ghz", ParamValue(std::string("fast"))),
            "Config.set: error: at 'chip.clock_ghz': takes a finite number, "
            "got fast");
  EXPECT_EQ(setParamError("chip.clock_ghz", ParamValue(INFINITY)),
            "Config.set: error: at 'chip.clock_ghz': takes a finite number, "
            "got inf");
  EXPECT_EQ(setParamError("name", ParamValue(int64_t{3})),
            "Config.set: error: at 'name': takes a string, got 3");
}
