// Reading and writing whole files with user-facing errors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace spyre {

/// Reads a whole file as bytes. A missing or unreadable file is a UserError
/// naming the path and the system's reason.
std::string readFile(const std::string &path);

/// Writes `bytes` to `path` through a temporary file in the same folder and a
/// rename, so a failed write never leaves a partial output behind. A
/// symlink is followed (the link stays); a device or pipe such as /dev/null
/// is written in place. An unwritable path is a UserError naming it.
void writeFileAtomic(const std::string &path, std::string_view bytes);

/// Fails early, before any long work, when `path` could not be written
/// later: a UserError naming it. Leaves no file behind.
void checkWritable(const std::string &path);

/// Fails early, like checkWritable, when the files `names` could not be
/// written into the folder `dir` later: `dir` is not a folder, it does not
/// exist and cannot be created, or one of the files cannot be written. A
/// UserError names the path; `what` names the folder in the message
/// (`cannot create outputs folder: Not a directory`). Creates nothing.
void checkWritableFolder(const std::string &dir,
                         const std::vector<std::string> &names,
                         const std::string &what = "folder");

} // namespace spyre
