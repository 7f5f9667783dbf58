// Fuzz target `safetensors`: the safetensors reader on arbitrary bytes, as a
// whole file and as a sharded checkpoint's index. A file it accepts must
// give each tensor exactly its shape's bytes, and written again (tensors in
// offset order) read back with the same tensors and data; an accepted index
// names only plain shard files.
#include "FuzzTarget.h"

#include "support/Diagnostic.h"
#include "support/Safetensors.h"

#include <algorithm>

using namespace spyre;

namespace {

void checkFile(std::string_view bytes) {
  SafetensorsHeader h;
  try {
    h = parseSafetensors(bytes, "fuzz.safetensors");
  } catch (const UserError &) {
    return;
  }
  std::vector<SafetensorsEntry> entries;
  for (const auto &[name, t] : h.tensors) {
    const std::string_view data = safetensorsData(h, t, bytes);
    SPYRE_ASSERT(static_cast<int64_t>(data.size()) ==
                     t.elementCount() * safetensorsDtypeSize(t.dtype),
                 "an accepted tensor's bytes do not match its shape");
    entries.push_back({name, t.dtype, t.shape, std::string(data)});
  }
  std::sort(entries.begin(), entries.end(),
            [&](const SafetensorsEntry &a, const SafetensorsEntry &b) {
              return h.tensors.at(a.name).begin != h.tensors.at(b.name).begin
                         ? h.tensors.at(a.name).begin <
                               h.tensors.at(b.name).begin
                         : h.tensors.at(a.name).end < h.tensors.at(b.name).end;
            });
  const std::string written = serializeSafetensors(entries);
  try {
    const SafetensorsHeader back =
        parseSafetensors(written, "fuzz2.safetensors");
    SPYRE_ASSERT(back.tensors.size() == h.tensors.size(),
                 "an accepted file reads back with other tensors");
    for (const SafetensorsEntry &e : entries) {
      const SafetensorsTensor *t = back.find(e.name);
      SPYRE_ASSERT(t && t->dtype == e.dtype && t->shape == e.shape &&
                       safetensorsData(back, *t, written) == e.data,
                   "an accepted tensor reads back changed after writing");
    }
  } catch (const UserError &e) {
    SPYRE_UNREACHABLE(std::string("an accepted file does not read back "
                                  "after writing: ") +
                      e.what());
  }
}

void checkIndex(std::string_view text) {
  SafetensorsIndex index;
  try {
    index = parseSafetensorsIndex(text, "fuzz.index.json");
  } catch (const UserError &) {
    return;
  }
  for (const auto &[name, shard] : index.weightMap)
    SPYRE_ASSERT(!shard.empty() && shard != "." &&
                     shard.find_first_of("/\\") == std::string::npos &&
                     shard.find("..") == std::string::npos,
                 "an accepted index names a shard outside its folder: " +
                     shard);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view bytes = fuzz::asText(data, size);
  checkFile(bytes);
  checkIndex(bytes);
  return 0;
}
