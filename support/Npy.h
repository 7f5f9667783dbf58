// NumPy `.npy` files: the tensor format ML users already have. Reads format
// versions 1.0-3.0 (little-endian, C order) and writes version 1.0, as
// numpy.save does for the dtypes the device uses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spyre {

enum class NpyDtype { F32, F16, I8, I32 };

/// `float32`, `float16`, `int8`, `int32`.
const char *npyDtypeName(NpyDtype dtype);
/// Bytes per element.
int npyDtypeSize(NpyDtype dtype);

/// `[3, 100]`: how messages and printed IR show a shape.
std::string shapeText(const std::vector<int64_t> &shape);

struct NpyArray {
  NpyDtype dtype = NpyDtype::F32;
  std::vector<int64_t> shape; ///< empty for a scalar (0-d array)
  std::string data;           ///< raw little-endian elements, C order

  int64_t elementCount() const;
};

/// Parses `.npy` bytes. Every malformed header, unsupported dtype or byte
/// order, Fortran order, or size mismatch is a UserError naming `fileName`.
/// The declared size is checked against the bytes present before anything is
/// allocated, so a lying header cannot exhaust memory.
NpyArray parseNpy(std::string_view bytes, const std::string &fileName);

/// Reads and parses a `.npy` file.
NpyArray readNpy(const std::string &path);

/// Serialises as `.npy` version 1.0 (what numpy.save writes).
std::string serializeNpy(const NpyArray &array);

/// Writes a `.npy` file atomically (no partial file on failure).
void writeNpy(const std::string &path, const NpyArray &array);

/// Convenience: a float32 array from values and a shape.
NpyArray makeNpyF32(const std::vector<float> &values,
                    const std::vector<int64_t> &shape);
/// Elements of an F32 array (UserError naming `fileName` for other dtypes).
std::vector<float> npyF32Values(const NpyArray &array,
                                const std::string &fileName);

} // namespace spyre
