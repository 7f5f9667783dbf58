#include "support/FileIO.h"

#include "support/Diagnostic.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace spyre {

std::string readFile(const std::string &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw UserError(SourceLoc{path}, std::string("cannot open file: ") +
                                         std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw UserError(SourceLoc{path}, "is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw UserError(SourceLoc{path}, std::string("cannot open file: ") +
                                         std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    throw UserError(SourceLoc{path}, "read error");
  return ss.str();
}

namespace {

[[noreturn]] void cannotWrite(const std::string &path, int err) {
  throw UserError(SourceLoc{path},
                  std::string("cannot write file: ") + std::strerror(err));
}

/// Writes `bytes` to `file` from its start; 0, or the errno of what failed.
int writeAll(const std::string &file, std::string_view bytes) {
  std::FILE *f = std::fopen(file.c_str(), "wb");
  if (!f)
    return errno;
  size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
  int err = written == bytes.size() ? 0 : errno;
  if (std::fclose(f) != 0 && err == 0)
    err = errno;
  return err;
}

} // namespace

void writeFileAtomic(const std::string &path, std::string_view bytes) {
  // A device or a pipe (`-o /dev/null`) is written in place: a rename
  // would replace it by a regular file.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) &&
      !S_ISDIR(st.st_mode)) {
    if (int err = writeAll(path, bytes))
      cannotWrite(path, err);
    return;
  }
  // A symlink stays one: the file it points to is what gets replaced.
  std::string target = path;
  std::error_code ec;
  if (std::filesystem::is_symlink(path, ec)) {
    std::filesystem::path resolved =
        std::filesystem::weakly_canonical(path, ec);
    if (!ec)
      target = resolved.string();
  }
  std::string tmp = target + ".tmp." + std::to_string(::getpid());
  int err = writeAll(tmp, bytes);
  if (err == 0 && std::rename(tmp.c_str(), target.c_str()) != 0)
    err = errno;
  if (err != 0) {
    std::remove(tmp.c_str());
    cannotWrite(path, err);
  }
}

void checkWritable(const std::string &path) {
  struct stat st {};
  bool existed = ::stat(path.c_str(), &st) == 0;
  if (existed && S_ISDIR(st.st_mode))
    throw UserError(SourceLoc{path}, "cannot write file: Is a directory");
  std::FILE *f = std::fopen(path.c_str(), "ab");
  if (!f)
    throw UserError(SourceLoc{path}, std::string("cannot write file: ") +
                                         std::strerror(errno));
  std::fclose(f);
  if (!existed)
    std::remove(path.c_str());
}

void checkWritableFolder(const std::string &dir,
                         const std::vector<std::string> &names,
                         const std::string &what) {
  auto cannotCreate = [&](int err) {
    throw UserError(SourceLoc{dir},
                    "cannot create " + what + ": " + std::strerror(err));
  };
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      cannotCreate(ENOTDIR);
    for (const std::string &name : names)
      checkWritable(dir + "/" + name);
    return;
  }
  // The folder is made when the files are written: its nearest existing
  // ancestor must be a folder we may create entries in.
  std::filesystem::path ancestor = std::filesystem::path(dir).parent_path();
  while (!ancestor.empty() && ::stat(ancestor.c_str(), &st) != 0)
    ancestor = ancestor.parent_path();
  if (ancestor.empty()) {
    ancestor = ".";
    if (::stat(".", &st) != 0)
      cannotCreate(errno);
  }
  if (!S_ISDIR(st.st_mode))
    cannotCreate(ENOTDIR);
  if (::access(ancestor.c_str(), W_OK | X_OK) != 0)
    cannotCreate(errno);
}

} // namespace spyre
