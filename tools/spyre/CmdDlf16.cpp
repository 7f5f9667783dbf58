// `spyre dlf16`: converts numbers to IBM DLFloat16 (DL16) codes, or codes back
// to numbers, one output line per argument with any conversion flags raised.
//
//   spyre dlf16 [--saturate] VALUE...   e.g. `1.001 -> 0x3e00 = 1`
//   spyre dlf16 --decode CODE...        e.g. `0x3e01 = 1.001953125`
//
// Values are taken as CLI11 "extras" rather than a declared positional so
// that arguments such as `-inf` and `-nan`, which look like short options,
// keep their place among the others. After `--` every argument is a value,
// as with every other command.
#include "Commands.h"

#include "numerics/Dlf16.h"
#include "support/Diagnostic.h"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace spyre::cli {

namespace {

struct Dlf16Options {
  bool saturate = false;
  bool decode = false;
  std::vector<std::string> unused;
};

constexpr const char *kUsage =
    "usage: spyre dlf16 [--saturate] VALUE... | spyre dlf16 --decode CODE...";

[[noreturn]] void usageError(const std::string &message) {
  throw UserError(SourceLoc{"spyre dlf16"}, message, ExitCode::Usage);
}

/// A number as fp32, the codec's input type (strtof rounds to nearest, so a
/// decimal is rounded once, straight to fp32). A value below the fp32 range
/// reads as zero; that is reported as an underflow.
float parseValue(const std::string &text, bool &underflow) {
  // strtof would skip leading blanks; a value must be the whole argument.
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    usageError(fmt::format("'{}' is not a number", text));
  // A bare hex integer is most likely a code given without --decode; strtof
  // would read 0x3e00 as 15872.
  size_t signLength = text[0] == '-' || text[0] == '+' ? 1 : 0;
  bool hex = text.compare(signLength, 2, "0x") == 0 ||
             text.compare(signLength, 2, "0X") == 0;
  if (hex && text.find_first_of("pP") == std::string::npos)
    usageError(fmt::format("'{}' looks like a DL16 code: use --decode to "
                           "decode it, or give a hex float a p exponent "
                           "(e.g. 0x1.8p3)",
                           text));
  const char *begin = text.c_str();
  char *end = nullptr;
  errno = 0;
  float value = std::strtof(begin, &end);
  if (end != begin + text.size())
    usageError(fmt::format("'{}' is not a number (expected e.g. 1.5, -2e-3, "
                           "0x1p-4, nan, inf)",
                           text));
  underflow = errno == ERANGE && value == 0.0f;
  return value;
}

uint16_t parseCode(const std::string &text) {
  bool hasPrefix =
      text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const char *first = text.data() + 2;
  const char *last = text.data() + text.size();
  unsigned value = 0;
  if (hasPrefix && text.size() <= 6) {
    auto [ptr, ec] = std::from_chars(first, last, value, 16);
    if (ec == std::errc() && ptr == last)
      return static_cast<uint16_t>(value);
  }
  usageError(fmt::format("'{}' is not a DL16 code (expected 0x followed by 1 "
                         "to 4 hex digits)",
                         text));
}

/// The shortest decimal that reads back as the same number; DL16 values are
/// exact in fp32 and double, so this is exact whenever it fits 17 digits.
std::string formatValue(float value) {
  if (std::isnan(value))
    return std::signbit(value) ? "-nan" : "nan";
  return fmt::format("{}", static_cast<double>(value));
}

std::string flagSuffix(const dlf16::Flags &flags) {
  std::string names;
  auto add = [&names](bool set, const char *name) {
    if (!set)
      return;
    names += names.empty() ? "" : ", ";
    names += name;
  };
  add(flags.invalid, "invalid");
  add(flags.overflow, "overflow");
  add(flags.underflow, "underflow");
  return names.empty() ? names : " (" + names + ")";
}

int runDlf16(const Dlf16Options &opts, std::vector<std::string> args) {
  // CLI11 keeps the `--` among the extras: what follows it is a value even
  // when it looks like an option.
  size_t firstPlain = args.size();
  if (auto dashes = std::find(args.begin(), args.end(), "--");
      dashes != args.end()) {
    firstPlain = static_cast<size_t>(dashes - args.begin());
    args.erase(dashes);
  }
  for (size_t i = 0; i < firstPlain; ++i)
    if (args[i].rfind("--", 0) == 0)
      usageError(fmt::format("unknown option '{}'", args[i]));
  if (args.empty())
    usageError(std::string("no values given; ") + kUsage);
  // Parse every argument before printing, so a bad one prints nothing else.
  std::string out;
  if (opts.decode) {
    for (const std::string &arg : args) {
      uint16_t code = parseCode(arg);
      out += fmt::format(
          "0x{:04x} = {}{}\n", code, formatValue(dlf16::toFloat(code)),
          dlf16::isSpecial(code) ? " (special: NaN or Inf)" : "");
    }
    std::cout << out;
    return static_cast<int>(ExitCode::Ok);
  }
  auto mode =
      opts.saturate ? dlf16::Overflow::Saturate : dlf16::Overflow::ToSpecial;
  for (const std::string &arg : args) {
    dlf16::Flags flags;
    float value = parseValue(arg, flags.underflow);
    uint16_t code = dlf16::fromFloat(value, mode, &flags);
    out += fmt::format("{} -> 0x{:04x} = {}{}\n", arg, code,
                       formatValue(dlf16::toFloat(code)), flagSuffix(flags));
  }
  std::cout << out;
  return static_cast<int>(ExitCode::Ok);
}

} // namespace

void addDlf16Command(CLI::App &app, Dispatch &dispatch) {
  auto opts = std::make_shared<Dlf16Options>();
  CLI::App *sub = app.add_subcommand(
      "dlf16", "Convert numbers to IBM DLFloat16 (DL16) codes, or decode "
               "codes, one line per argument");
  CLI::Option *saturate = sub->add_flag(
      "--saturate", opts->saturate,
      "Finite values beyond the DL16 range become +-0x7ffe (8573157376) "
      "instead of the special code");
  CLI::Option *decode =
      sub->add_flag("--decode", opts->decode,
                    "The arguments are DL16 codes (0xHHHH) to decode");
  saturate->excludes(decode);
  sub->allow_extras();
  // Declared so that CLI11 keeps a `--` here (it hands it to the parent
  // command when no positional is left), it never takes a value: its check
  // fails on every argument, which then goes to the extras in order.
  sub->add_option("values", opts->unused,
                  "Values (or with --decode, codes); after `--` every "
                  "argument is one")
      ->check(CLI::Validator([](std::string &) { return std::string("extra"); },
                             "", "extra"));
  sub->validate_positionals();
  sub->footer(
      std::string(kUsage) +
      "\nVALUE: a decimal or hex float, nan, inf, -inf, ...; it is rounded "
      "to fp32, then to DL16 (nearest, ties away from zero).\nOutput: "
      "`VALUE -> 0xHHHH = DECODED (flags)` or `0xHHHH = DECODED`.\n");
  sub->callback([&dispatch, sub, opts] {
    dispatch.run = [opts, args = sub->remaining()] {
      return runDlf16(*opts, args);
    };
  });
}

} // namespace spyre::cli
