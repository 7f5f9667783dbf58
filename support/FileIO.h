// Reading and writing whole files with user-facing errors.
#pragma once

#include <string>
#include <string_view>

namespace spyre {

/// Reads a whole file as bytes. A missing or unreadable file is a UserError
/// naming the path and the system's reason.
std::string readFile(const std::string &path);

/// Writes `bytes` to `path` through a temporary file in the same folder and a
/// rename, so a failed write never leaves a partial output behind. An
/// unwritable path is a UserError naming it.
void writeFileAtomic(const std::string &path, std::string_view bytes);

/// Fails early, before any long work, when `path` could not be written
/// later: a UserError naming it. Leaves no file behind.
void checkWritable(const std::string &path);

} // namespace spyre
