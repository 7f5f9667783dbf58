#include "compiler/ir/Attribute.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

namespace spyre::compiler {

namespace {

bool isBareKey(std::string_view name) {
  if (name.empty())
    return false;
  auto isAlpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!isAlpha(name[0]))
    return false;
  return std::all_of(name.begin(), name.end(), [&](char c) {
    return isAlpha(c) || (c >= '0' && c <= '9') || c == '.';
  });
}

std::string printKey(std::string_view name) {
  return isBareKey(name) ? std::string(name) : quoteString(name);
}

auto lowerBound(const std::vector<NamedAttribute> &entries,
                std::string_view name) {
  return std::lower_bound(
      entries.begin(), entries.end(), name,
      [](const NamedAttribute &e, std::string_view n) { return e.name < n; });
}

} // namespace

// ---- AttrDict ----

AttrDict::AttrDict() = default;
AttrDict::AttrDict(const AttrDict &other) = default;
AttrDict::AttrDict(AttrDict &&other) noexcept = default;
AttrDict &AttrDict::operator=(const AttrDict &other) = default;
AttrDict &AttrDict::operator=(AttrDict &&other) noexcept = default;
AttrDict::~AttrDict() = default;

AttrDict::AttrDict(std::initializer_list<NamedAttribute> entries) {
  for (const NamedAttribute &e : entries)
    set(e.name, e.value);
}

const Attribute *AttrDict::find(std::string_view name) const {
  auto it = lowerBound(entries_, name);
  if (it == entries_.end() || it->name != name)
    return nullptr;
  return &it->value;
}

Attribute *AttrDict::find(std::string_view name) {
  return const_cast<Attribute *>(std::as_const(*this).find(name));
}

const Attribute &AttrDict::get(std::string_view name) const {
  const Attribute *a = find(name);
  SPYRE_ASSERT(a != nullptr, "no attribute '" + std::string(name) + "'");
  return *a;
}

void AttrDict::set(std::string name, Attribute value) {
  auto it = lowerBound(entries_, name);
  if (it != entries_.end() && it->name == name) {
    entries_[static_cast<size_t>(it - entries_.begin())].value =
        std::move(value);
    return;
  }
  entries_.insert(it, NamedAttribute{std::move(name), std::move(value)});
}

bool AttrDict::erase(std::string_view name) {
  auto it = lowerBound(entries_, name);
  if (it == entries_.end() || it->name != name)
    return false;
  entries_.erase(it);
  return true;
}

std::vector<NamedAttribute>::const_iterator AttrDict::begin() const {
  return entries_.begin();
}

std::vector<NamedAttribute>::const_iterator AttrDict::end() const {
  return entries_.end();
}

bool AttrDict::operator==(const AttrDict &other) const {
  return entries_ == other.entries_;
}

std::string AttrDict::str() const {
  std::string out = "{";
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += printKey(entries_[i].name) + " = " + entries_[i].value.str();
  }
  return out + "}";
}

// ---- Attribute ----

Attribute::Attribute(double value)
    : value_(std::isnan(value) ? std::numeric_limits<double>::quiet_NaN()
                               : value) {}

Attribute Attribute::list(List elements) { return Attribute(std::move(elements)); }

Attribute Attribute::ints(const std::vector<int64_t> &values) {
  List l;
  l.reserve(values.size());
  for (int64_t v : values)
    l.emplace_back(v);
  return Attribute(std::move(l));
}

Attribute Attribute::floats(const std::vector<double> &values) {
  List l;
  l.reserve(values.size());
  for (double v : values)
    l.emplace_back(v);
  return Attribute(std::move(l));
}

std::string Attribute::kindName() const {
  switch (kind()) {
  case Kind::Int:
    return "int";
  case Kind::Float:
    return "float";
  case Kind::Bool:
    return "bool";
  case Kind::String:
    return "string";
  case Kind::List:
    if (!asList().empty() && isIntList())
      return "int list";
    if (!asList().empty() && isFloatList())
      return "float list";
    return "list";
  case Kind::Dict:
    return "dict";
  }
  SPYRE_UNREACHABLE("bad attribute kind");
}

bool Attribute::isIntList() const {
  if (!isList())
    return false;
  const List &l = asList();
  return std::all_of(l.begin(), l.end(),
                     [](const Attribute &a) { return a.isInt(); });
}

bool Attribute::isFloatList() const {
  if (!isList())
    return false;
  const List &l = asList();
  return std::all_of(l.begin(), l.end(),
                     [](const Attribute &a) { return a.isFloat(); });
}

int64_t Attribute::asInt() const {
  SPYRE_ASSERT(isInt(), "attribute is a " + kindName() + ", not an int");
  return std::get<int64_t>(value_);
}

double Attribute::asFloat() const {
  SPYRE_ASSERT(isFloat(), "attribute is a " + kindName() + ", not a float");
  return std::get<double>(value_);
}

bool Attribute::asBool() const {
  SPYRE_ASSERT(isBool(), "attribute is a " + kindName() + ", not a bool");
  return std::get<bool>(value_);
}

const std::string &Attribute::asString() const {
  SPYRE_ASSERT(isString(), "attribute is a " + kindName() + ", not a string");
  return std::get<std::string>(value_);
}

const Attribute::List &Attribute::asList() const {
  SPYRE_ASSERT(isList(), "attribute is a " + kindName() + ", not a list");
  return std::get<List>(value_);
}

const AttrDict &Attribute::asDict() const {
  SPYRE_ASSERT(isDict(), "attribute is a " + kindName() + ", not a dict");
  return std::get<AttrDict>(value_);
}

AttrDict &Attribute::asDict() {
  SPYRE_ASSERT(isDict(), "attribute is a " + kindName() + ", not a dict");
  return std::get<AttrDict>(value_);
}

std::vector<int64_t> Attribute::asInts() const {
  SPYRE_ASSERT(isIntList(), "attribute is a " + kindName() + ", not an int list");
  std::vector<int64_t> out;
  for (const Attribute &a : asList())
    out.push_back(a.asInt());
  return out;
}

std::vector<double> Attribute::asFloats() const {
  SPYRE_ASSERT(isFloatList(),
               "attribute is a " + kindName() + ", not a float list");
  std::vector<double> out;
  for (const Attribute &a : asList())
    out.push_back(a.asFloat());
  return out;
}

bool Attribute::operator==(const Attribute &other) const {
  if (kind() != other.kind())
    return false;
  // Bit equality: NaN equals NaN, and -0.0 differs from 0.0, so equal
  // attributes always print the same.
  if (isFloat())
    return std::bit_cast<uint64_t>(asFloat()) ==
           std::bit_cast<uint64_t>(other.asFloat());
  return value_ == other.value_;
}

std::string Attribute::str() const {
  switch (kind()) {
  case Kind::Int:
    return std::to_string(asInt());
  case Kind::Float:
    return formatDouble(asFloat());
  case Kind::Bool:
    return asBool() ? "true" : "false";
  case Kind::String:
    return quoteString(asString());
  case Kind::List: {
    std::string out = "[";
    const List &l = asList();
    for (size_t i = 0; i < l.size(); ++i) {
      if (i > 0)
        out += ", ";
      out += l[i].str();
    }
    return out + "]";
  }
  case Kind::Dict:
    return asDict().str();
  }
  SPYRE_UNREACHABLE("bad attribute kind");
}

// ---- Text helpers ----

namespace {

/// Makes shortest-round-trip text read as a float: `1` -> `1.0`.
std::string asFloatText(std::string text) {
  if (text == "inf" || text == "-inf")
    return text;
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

} // namespace

std::string formatDouble(double value) {
  if (std::isnan(value))
    return "nan";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, value);
  SPYRE_ASSERT(r.ec == std::errc(), "to_chars failed");
  return asFloatText(std::string(buf, r.ptr));
}

std::string formatFloat(float value) {
  if (std::isnan(value))
    return "nan";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, value);
  SPYRE_ASSERT(r.ec == std::errc(), "to_chars failed");
  return asFloatText(std::string(buf, r.ptr));
}

std::string quoteString(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

} // namespace spyre::compiler
