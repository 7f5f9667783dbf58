// Fuzz target `npy`: the .npy reader on arbitrary bytes. An array it accepts
// must serialise and parse back to the same dtype, shape and data.
#include "FuzzTarget.h"

#include "support/Diagnostic.h"
#include "support/Npy.h"

using namespace spyre;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  NpyArray array;
  try {
    array = parseNpy(fuzz::asText(data, size), "fuzz.npy");
  } catch (const UserError &) {
    return 0;
  }
  SPYRE_ASSERT(static_cast<int64_t>(array.data.size()) ==
                   array.elementCount() * npyDtypeSize(array.dtype),
               "an accepted array's data does not match its shape");
  try {
    NpyArray back = parseNpy(serializeNpy(array), "fuzz2.npy");
    SPYRE_ASSERT(back.dtype == array.dtype && back.shape == array.shape &&
                     back.data == array.data,
                 "an accepted array reads back changed after writing");
    if (array.dtype == NpyDtype::F32)
      npyF32Values(array, "fuzz.npy");
  } catch (const UserError &e) {
    SPYRE_UNREACHABLE(std::string("an accepted array does not read back "
                                  "after writing: ") + e.what());
  }
  return 0;
}
