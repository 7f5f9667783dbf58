// Mapping annotations and mapping files (what they hold: Mapping.h).
#include "compiler/plan/Mapping.h"

#include "support/Nesting.h"

#include <nlohmann/json.hpp>

namespace spyre::compiler {

namespace {

using Json = nlohmann::ordered_json;

// The fields, in the order annotations and files write them.
constexpr const char *kFields[] = {
    "cores",   "first_core", "grid",       "tile",      "n_outer",
    "share_a", "keep_b",     "k_split",    "tile_rows", "phase",
    "lx",      "fuse_bias",  "fused_into", "chain",     "overlap"};

} // namespace

Attribute OpMapping::toAttribute() const {
  AttrDict d;
  if (cores >= 0)
    d.set("cores", cores);
  if (firstCore >= 0)
    d.set("first_core", firstCore);
  if (!grid.empty())
    d.set("grid", Attribute::ints(grid));
  if (!tile.empty())
    d.set("tile", Attribute::ints(tile));
  if (nOuter)
    d.set("n_outer", *nOuter);
  if (shareA)
    d.set("share_a", *shareA);
  if (keepB)
    d.set("keep_b", *keepB);
  if (kSplit >= 0)
    d.set("k_split", kSplit);
  if (tileRows >= 0)
    d.set("tile_rows", tileRows);
  if (phase >= 0)
    d.set("phase", phase);
  if (!lx.empty())
    d.set("lx", Attribute::ints(lx));
  if (!fuseBias.empty())
    d.set("fuse_bias", fuseBias);
  if (!fusedInto.empty())
    d.set("fused_into", fusedInto);
  if (!chain.empty()) {
    Attribute::List names;
    for (const std::string &n : chain)
      names.emplace_back(n);
    d.set("chain", Attribute::list(std::move(names)));
  }
  if (overlap)
    d.set("overlap", *overlap);
  return d;
}

std::optional<OpMapping> OpMapping::fromAttribute(const Attribute &attr,
                                                  std::string &error) {
  if (!attr.isDict()) {
    error = "a mapping is a dictionary";
    return std::nullopt;
  }
  OpMapping m;
  for (const auto &entry : attr.asDict()) {
    // Named, not bound: clang 14 (the fuzz build) cannot capture a
    // structured binding in a lambda.
    const std::string &name = entry.name;
    const Attribute &value = entry.value;
    auto wantInt = [&](int64_t &out, int64_t lo) {
      if (!value.isInt() || value.asInt() < lo) {
        error = "'" + name + "' must be an integer >= " + std::to_string(lo);
        return false;
      }
      out = value.asInt();
      return true;
    };
    auto wantInts = [&](std::vector<int64_t> &out, size_t n) {
      if (!value.isIntList() || value.asInts().size() != n) {
        error = "'" + name + "' must be a list of " + std::to_string(n) +
                " integers";
        return false;
      }
      out = value.asInts();
      for (int64_t v : out)
        if (v < 0) {
          error = "'" + name + "' must not be negative";
          return false;
        }
      return true;
    };
    auto wantString = [&](std::string &out) {
      if (!value.isString()) {
        error = "'" + name + "' must be a string";
        return false;
      }
      out = value.asString();
      return true;
    };
    bool ok = true;
    if (name == "cores")
      ok = wantInt(m.cores, 1);
    else if (name == "first_core")
      ok = wantInt(m.firstCore, 0);
    else if (name == "grid")
      ok = wantInts(m.grid, 2);
    else if (name == "tile")
      ok = wantInts(m.tile, 3);
    else if (name == "n_outer" || name == "share_a" || name == "keep_b" ||
             name == "overlap") {
      if (!value.isBool()) {
        error = "'" + name + "' must be true or false";
        return std::nullopt;
      }
      (name == "n_outer"   ? m.nOuter
       : name == "share_a" ? m.shareA
       : name == "keep_b"  ? m.keepB
                           : m.overlap) = value.asBool();
    } else if (name == "k_split")
      ok = wantInt(m.kSplit, 0); // 0 is refused, by name, with the plan
    else if (name == "tile_rows")
      ok = wantInt(m.tileRows, 0);
    else if (name == "phase")
      ok = wantInt(m.phase, 0);
    else if (name == "lx")
      ok = wantInts(m.lx, 2);
    else if (name == "fuse_bias")
      ok = wantString(m.fuseBias);
    else if (name == "fused_into")
      ok = wantString(m.fusedInto);
    else if (name == "chain") {
      ok = value.isList() && !value.asList().empty();
      for (size_t i = 0; ok && i < value.asList().size(); ++i) {
        ok = value.asList()[i].isString() &&
             !value.asList()[i].asString().empty();
        if (ok)
          m.chain.push_back(value.asList()[i].asString());
      }
      if (!ok)
        error = "'chain' must be a non-empty list of op names";
    }
    else {
      std::string names;
      for (const char *f : kFields)
        names += std::string(names.empty() ? "" : ", ") + f;
      error = "unknown mapping field '" + name + "' (fields: " + names + ")";
      return std::nullopt;
    }
    if (!ok)
      return std::nullopt;
  }
  return m;
}

OpMapping opMapping(const Op &op) {
  const Attribute *a = op.annotations().find(kMappingAnnotation);
  if (!a)
    return {};
  std::string error;
  std::optional<OpMapping> m = OpMapping::fromAttribute(*a, error);
  SPYRE_ASSERT(m, "op '" + op.name() + "': bad mapping annotation: " + error);
  return *m;
}

void setOpMapping(Op &op, const OpMapping &mapping) {
  op.annotations().set(kMappingAnnotation, mapping.toAttribute());
}

MappingFile collectMapping(const Graph &graph, std::string configFingerprint) {
  MappingFile f;
  f.graph = graph.name();
  f.configFingerprint = std::move(configFingerprint);
  for (const Op *op : graph.ops())
    if (op->annotations().contains(kMappingAnnotation))
      f.ops[op->name()] = opMapping(*op);
  return f;
}

std::string mappingJson(const MappingFile &file) {
  // One line per op keeps files diffable and easy to edit by hand.
  std::string out = "{\n  \"graph\": " + Json(file.graph).dump() +
                    ",\n  \"config_fingerprint\": " +
                    Json(file.configFingerprint).dump() + ",\n  \"ops\": {";
  bool first = true;
  for (const auto &[name, m] : file.ops) {
    Json j = Json::object();
    const Attribute attr = m.toAttribute();
    for (const auto &[key, value] : attr.asDict()) {
      if (value.isInt())
        j[key] = value.asInt();
      else if (value.isBool())
        j[key] = value.asBool();
      else if (value.isString())
        j[key] = value.asString();
      else if (value.isIntList())
        j[key] = value.asInts();
      else {
        Json names = Json::array();
        for (const Attribute &e : value.asList())
          names.push_back(e.asString());
        j[key] = names;
      }
    }
    out += std::string(first ? "\n" : ",\n") + "    " + Json(name).dump() +
           ": " + j.dump();
    first = false;
  }
  out += "\n  }\n}\n";
  return out;
}

std::optional<MappingFile> parseMappingJson(const std::string &text,
                                            const std::string &path,
                                            DiagnosticEngine &diags) {
  auto at = [&](const std::string &keyPath) {
    SourceLoc loc;
    loc.file = path;
    loc.keyPath = keyPath;
    return loc;
  };
  if (std::optional<TextPos> deep = findJsonTooDeep(text)) {
    diags.error(SourceLoc{path, deep->line, deep->col}, jsonTooDeepMessage());
    return std::nullopt;
  }
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error &e) {
    diags.error(at(""), std::string("not valid JSON: ") + e.what());
    return std::nullopt;
  }
  if (!j.is_object() || !j.contains("ops") || !j["ops"].is_object()) {
    diags.error(at(""), "a mapping file is an object with an 'ops' object");
    return std::nullopt;
  }
  MappingFile f;
  if (j.contains("graph") && j["graph"].is_string())
    f.graph = j["graph"].get<std::string>();
  if (j.contains("config_fingerprint") && j["config_fingerprint"].is_string())
    f.configFingerprint = j["config_fingerprint"].get<std::string>();
  for (const auto &[key, value] : j.items())
    if (key != "graph" && key != "config_fingerprint" && key != "ops") {
      diags.error(at(key), "unknown key (keys: graph, config_fingerprint, "
                           "ops)");
      return std::nullopt;
    }
  for (const auto &[name, value] : j["ops"].items()) {
    const std::string keyPath = "ops." + name;
    if (!value.is_object()) {
      diags.error(at(keyPath), "an op's mapping is an object");
      return std::nullopt;
    }
    AttrDict d;
    for (const auto &[field, v] : value.items()) {
      if (v.is_boolean())
        d.set(field, v.get<bool>());
      else if (v.is_number_integer())
        d.set(field, v.get<int64_t>());
      else if (v.is_string())
        d.set(field, v.get<std::string>());
      else if (v.is_array() && !v.empty() && v.front().is_string()) {
        Attribute::List names;
        for (const Json &e : v) {
          if (!e.is_string()) {
            diags.error(at(keyPath + "." + field),
                        "expected a list of strings");
            return std::nullopt;
          }
          names.emplace_back(e.get_ref<const std::string &>());
        }
        d.set(field, Attribute::list(std::move(names)));
      } else if (v.is_array()) {
        std::vector<int64_t> ints;
        for (const Json &e : v) {
          if (!e.is_number_integer()) {
            diags.error(at(keyPath + "." + field),
                        "expected a list of integers");
            return std::nullopt;
          }
          ints.push_back(e.get<int64_t>());
        }
        d.set(field, Attribute::ints(ints));
      } else {
        diags.error(at(keyPath + "." + field),
                    "expected an integer, a boolean, a string or a list");
        return std::nullopt;
      }
    }
    std::string error;
    std::optional<OpMapping> m = OpMapping::fromAttribute(d, error);
    if (!m) {
      diags.error(at(keyPath), error);
      return std::nullopt;
    }
    f.ops[name] = *m;
  }
  return f;
}

bool applyMapping(Graph &graph, const MappingFile &file,
                  const std::string &path, DiagnosticEngine &diags) {
  for (const auto &[name, m] : file.ops) {
    Op *op = graph.findOp(name);
    if (!op) {
      SourceLoc loc;
      loc.file = path;
      loc.keyPath = "ops." + name;
      diags.error(loc, "the graph has no op '" + name + "'");
      return false;
    }
    setOpMapping(*op, m);
  }
  return true;
}

} // namespace spyre::compiler
