#include "Version.h"

#include "hw/HwConfig.h"
#include "isa/Program.h"

#include <google/protobuf/stubs/common.h>
#include <onnx/common/version.h>
#include <systemc>

#include <string>

namespace spyre::cli {

extern const char *const kGitRevision; // GitRevision.cpp, made at build time

namespace {

/// protobuf spells its version as one number, 3021012 for 3.21.12.
std::string protobufVersion() {
  constexpr int v = GOOGLE_PROTOBUF_VERSION;
  return std::to_string(v / 1000000) + "." + std::to_string(v / 1000 % 1000) +
         "." + std::to_string(v % 1000);
}

} // namespace

std::string versionText() {
  auto line = [](const std::string &key, const std::string &value) {
    return key + std::string(10 - key.size(), ' ') + value + "\n";
  };
  return std::string("spyre ") + SPYRE_VERSION + "\n" +
         line("revision", kGitRevision) +
         line("isa", std::to_string(isa::kIsaVersionMajor) + "." +
                         std::to_string(isa::kIsaVersionMinor)) +
         line("config", hw::fingerprintString(hw::builtinConfig().fingerprint()) +
                            " (built-in " + hw::builtinConfig().name + ")") +
         line("systemc", sc_core::sc_release()) +
         line("onnx", ONNX_NAMESPACE::LAST_RELEASE_VERSION) +
         line("protobuf", protobufVersion());
}

} // namespace spyre::cli
