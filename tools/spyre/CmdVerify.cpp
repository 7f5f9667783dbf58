// `spyre verify`: checks a program file against a config without running it
// (the checks `spyre sim` makes before a run: checksum, ISA version, config
// fingerprint, and that every stream and tensor fits the config) and prints
// what the file holds: its streams per core and its tensor map.
#include "Commands.h"
#include "ConfigOptions.h"

#include "hw/HwConfig.h"
#include "isa/Program.h"
#include "support/Diagnostic.h"
#include "support/FileIO.h"
#include "support/Hash.h"
#include "support/Npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

namespace spyre::cli {

namespace {

/// Width of the key column of the listing ("program bytes" and two spaces).
constexpr size_t kKeyWidth = 15;

struct VerifyOptions {
  std::string program;
  hw::ConfigSource config;
};

/// Header fields the listing shows, by byte offset (docs/program-file.md).
constexpr size_t kMajorAt = 8, kMinorAt = 10, kCrcAt = 32;

/// Little-endian unsigned integer of `size` bytes at `offset`.
uint64_t headerField(std::string_view bytes, size_t offset, size_t size) {
  uint64_t v = 0;
  for (size_t i = 0; i < size; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[offset + i]))
         << (8 * i);
  return v;
}

/// Names are bytes from the file: control characters are shown as \xNN so
/// the listing stays one line per entry.
std::string printable(const std::string &name) {
  std::string out;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      out += "\\x" + toHex(u, 2);
      continue;
    }
    out += c;
  }
  return out;
}

/// Left-aligned columns, two spaces apart; the last column is not padded.
std::string table(const std::vector<std::vector<std::string>> &rows,
                  const std::string &indent) {
  std::vector<size_t> widths;
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      widths.resize(std::max(widths.size(), c + 1));
      widths[c] = std::max(widths[c], row[c].size());
    }
  std::string out;
  for (const auto &row : rows) {
    std::string line = indent;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size())
        line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

int runVerify(const VerifyOptions &o) {
  hw::HwConfig config = hw::loadConfig(o.config);
  std::string bytes = readFile(o.program, kProgramFileLimit);
  // Magic, ISA version, checksum and every section.
  isa::Program program = isa::readProgram(bytes, o.program);
  if (program.configFingerprint != config.fingerprint())
    throw UserError(
        SourceLoc{o.program},
        "compiled for config " +
            hw::fingerprintString(program.configFingerprint) +
            " but the config " +
            describeConfig(o.config) + " is " +
            hw::fingerprintString(config.fingerprint()) +
            "; recompile, or pass the config it was compiled for");
  // A file with the right fingerprint may still have been made by hand.
  if (std::string misfit = isa::checkProgramFits(program, config);
      !misfit.empty())
    throw UserError(SourceLoc{o.program}, misfit);

  // Key-value lines share one key column; streams and tensors are listed
  // under their line as tables of their own.
  std::ostringstream out;
  auto field = [&out](const std::string &key, const std::string &value) {
    out << "  " << key << std::string(kKeyWidth - key.size(), ' ') << value
        << "\n";
  };
  out << o.program << ": ok\n";
  field("name", printable(program.name));
  field("isa version", std::to_string(headerField(bytes, kMajorAt, 2)) + "." +
                           std::to_string(headerField(bytes, kMinorAt, 2)));
  field("checksum", "0x" + toHex(headerField(bytes, kCrcAt, 4), 8) + " (ok)");
  field("config", hw::fingerprintString(program.configFingerprint) +
                      ", matches " +
                      (o.config.path.empty() && o.config.settings.empty()
                           ? std::string("the built-in config")
                           : describeConfig(o.config)));

  std::map<int, std::vector<const isa::Stream *>> byCore;
  for (const isa::Stream &s : program.streams)
    byCore[s.core].push_back(&s);
  field("streams", plural(program.streams.size(), "stream") + " on " +
                       plural(byCore.size(), "core") + ", " +
                       plural(program.instructionCount(), "instruction"));
  std::vector<std::vector<std::string>> cores;
  for (const auto &[core, streams] : byCore) {
    std::string list;
    for (const isa::Stream *s : streams)
      list += (list.empty() ? "" : ", ") +
              isa::engineUnitName(s->engine, s->unit) + " (" +
              std::to_string(s->code.size()) + ")";
    cores.push_back({"core " + std::to_string(core), list});
  }
  out << table(cores, "    ");

  uint64_t deviceBytes = 0;
  std::vector<std::vector<std::string>> tensors = {
      {"name", "kind", "dtype", "host shape", "address", "bytes"}};
  for (const isa::TensorDecl &t : program.tensors) {
    uint64_t size = t.sizeSticks * uint64_t{isa::kStickBytes};
    deviceBytes += size;
    tensors.push_back(
        {printable(t.name), std::string(isa::tensorKindName(t.kind)),
         std::string(isa::dtypeName(t.dtype)), shapeText(t.hostShape),
         fmt::format("{:#x}", t.address * isa::kStickBytes),
         std::to_string(size)});
  }
  field("tensors", std::to_string(program.tensors.size()));
  if (!program.tensors.empty())
    out << table(tensors, "    ");
  if (!program.hostOps.empty()) {
    // Host fallback ops (ISA 1.1): what runs on the host, on which tensors.
    std::vector<std::vector<std::string>> hosts = {
        {"name", "op type", "inputs", "outputs", "flops"}};
    auto names = [&](const std::vector<uint32_t> &ids) {
      std::string s;
      for (uint32_t i : ids)
        s += (s.empty() ? "" : ", ") + printable(program.tensors[i].name);
      return s;
    };
    for (const isa::HostOpDecl &h : program.hostOps)
      hosts.push_back({printable(h.name), printable(h.opType), names(h.inputs),
                       names(h.outputs), std::to_string(h.flops)});
    field("host ops", std::to_string(program.hostOps.size()));
    out << table(hosts, "    ");
  }
  field("device bytes", std::to_string(deviceBytes));
  field("program bytes", std::to_string(bytes.size()));
  std::cout << out.str();
  return static_cast<int>(ExitCode::Ok);
}

} // namespace

void addVerifyCommand(CLI::App &app, Dispatch &dispatch) {
  auto opts = std::make_shared<VerifyOptions>();
  CLI::App *verify = app.add_subcommand(
      "verify",
      "Check a program file against a config (checksum, ISA "
      "version, config fingerprint) and list its streams and tensors");
  verify->add_option("program", opts->program, "Program file (.spyre)")
      ->required();
  addConfigOptions(verify, opts->config);
  verify->callback([opts, &dispatch] {
    dispatch.run = [opts] { return runVerify(*opts); };
  });
}

} // namespace spyre::cli
