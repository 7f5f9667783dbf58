// Attributes: the typed constant values attached to ops and values.
//
// An Attribute is an int (int64), a float (double), a bool, a string, a list
// of attributes or a dictionary of named attributes. Op attributes use the
// first four kinds and lists of ints or floats, checked against the op's
// schema (OpRegistry.h); lists and dictionaries nest freely so that later
// passes can attach structured annotations (a layout, a core split) that the
// printer and parser handle generically, without knowing what they mean.
//
// There is one list kind: an "int list" is a list whose elements are all
// ints, so an empty list is never ambiguous. Floats compare by bit pattern
// (NaN equals itself; every NaN is stored as the canonical quiet NaN), which
// keeps equality and printing exact and deterministic. Dictionaries are
// sorted by key.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace spyre::compiler {

class Attribute;
struct NamedAttribute;

/// Attributes by name, kept sorted by name (byte order), so iteration,
/// printing and comparison never depend on insertion order.
class AttrDict {
public:
  // NamedAttribute is incomplete here (it holds an Attribute, which holds
  // AttrDicts), so every member that needs its size is defined out of line:
  // libstdc++ with clang rejects them inline.
  AttrDict();
  AttrDict(std::initializer_list<NamedAttribute> entries);
  AttrDict(const AttrDict &other);
  AttrDict(AttrDict &&other) noexcept;
  AttrDict &operator=(const AttrDict &other);
  AttrDict &operator=(AttrDict &&other) noexcept;
  ~AttrDict();

  bool empty() const;
  size_t size() const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  /// The attribute called `name`, or nullptr.
  const Attribute *find(std::string_view name) const;
  Attribute *find(std::string_view name);
  /// The attribute called `name`; it must exist.
  const Attribute &get(std::string_view name) const;
  /// Inserts or replaces.
  void set(std::string name, Attribute value);
  /// Removes `name`; returns whether it was there.
  bool erase(std::string_view name);

  const std::vector<NamedAttribute> &entries() const { return entries_; }
  std::vector<NamedAttribute>::const_iterator begin() const;
  std::vector<NamedAttribute>::const_iterator end() const;

  bool operator==(const AttrDict &other) const;

  /// `{a = 1, b = [2, 3]}`: the IR text form.
  std::string str() const;

private:
  std::vector<NamedAttribute> entries_;
};

class Attribute {
public:
  enum class Kind : uint8_t { Int, Float, Bool, String, List, Dict };
  using List = std::vector<Attribute>;

  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Attribute(T value) : value_(static_cast<int64_t>(value)) {}
  Attribute(bool value) : value_(value) {}
  Attribute(double value);
  Attribute(std::string value) : value_(std::move(value)) {}
  Attribute(std::string_view value) : value_(std::string(value)) {}
  Attribute(const char *value) : value_(std::string(value)) {}
  Attribute(AttrDict value) : value_(std::move(value)) {}

  static Attribute list(List elements);
  static Attribute ints(const std::vector<int64_t> &values);
  static Attribute floats(const std::vector<double> &values);

  Kind kind() const { return static_cast<Kind>(value_.index()); }
  /// `int`, `float`, `bool`, `string`, `list`, `dict` (`int list` and
  /// `float list` for lists that are all ints or all floats and not empty).
  std::string kindName() const;

  bool isInt() const { return kind() == Kind::Int; }
  bool isFloat() const { return kind() == Kind::Float; }
  bool isBool() const { return kind() == Kind::Bool; }
  bool isString() const { return kind() == Kind::String; }
  bool isList() const { return kind() == Kind::List; }
  bool isDict() const { return kind() == Kind::Dict; }
  /// A list whose elements are all ints (the empty list included).
  bool isIntList() const;
  /// A list whose elements are all floats (the empty list included).
  bool isFloatList() const;

  // Accessors assert the kind: callers check it first or rely on a verified
  // op schema.
  int64_t asInt() const;
  double asFloat() const;
  bool asBool() const;
  const std::string &asString() const;
  const List &asList() const;
  const AttrDict &asDict() const;
  AttrDict &asDict();
  std::vector<int64_t> asInts() const;
  std::vector<double> asFloats() const;

  bool operator==(const Attribute &other) const;

  /// The IR text form: `3`, `1.0e-05`, `true`, `"tanh"`, `[1, 2]`, `{k = 1}`.
  std::string str() const;

private:
  explicit Attribute(List elements) : value_(std::move(elements)) {}

  // Index order is Kind order.
  std::variant<int64_t, double, bool, std::string, List, AttrDict> value_;
};

struct NamedAttribute {
  std::string name;
  Attribute value;

  bool operator==(const NamedAttribute &other) const = default;
};

inline bool AttrDict::empty() const { return entries_.empty(); }
inline size_t AttrDict::size() const { return entries_.size(); }

/// Shortest decimal text that reads back as exactly `value`, always with a
/// `.` or an exponent so it reads as a float: `1.0`, `0.125`, `1e-05`,
/// `inf`, `-inf`, `nan`.
std::string formatDouble(double value);
/// The same for a float32 value (shortest text that reads back as the same
/// float when parsed as float32).
std::string formatFloat(float value);

/// `"text"` with `"`, `\` and control characters escaped (`\n`, `\t`,
/// `\xHH`); other bytes, UTF-8 included, are kept.
std::string quoteString(std::string_view text);

} // namespace spyre::compiler
