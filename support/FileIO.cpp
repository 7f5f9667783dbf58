#include "support/FileIO.h"

#include "support/Diagnostic.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace spyre {

namespace {

/// `64 MiB`, `2 GiB`, `512 bytes`: a limit for messages.
std::string sizeText(uint64_t bytes) {
  if (bytes >= kGiB && bytes % kGiB == 0)
    return std::to_string(bytes / kGiB) + " GiB";
  if (bytes >= kMiB && bytes % kMiB == 0)
    return std::to_string(bytes / kMiB) + " MiB";
  if (bytes + 1 >= kGiB && (bytes + 1) % kGiB == 0)
    return std::to_string((bytes + 1) / kGiB) + " GiB";
  return std::to_string(bytes) + " bytes";
}

/// `size` is the file's size in bytes, or empty for a device or pipe that
/// gave more than the limit.
[[noreturn]] void tooLarge(const std::string &path, const FileLimit &limit,
                           const std::string &size) {
  throw UserError(SourceLoc{path},
                  (size.empty() ? std::string("holds") : "is " + size + ",") +
                      " more than the " + sizeText(limit.maxBytes) + " " +
                      limit.what + " may have");
}

} // namespace

std::optional<uint64_t> checkInputFile(const std::string &path,
                                       const FileLimit &limit) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw UserError(SourceLoc{path}, std::string("cannot open file: ") +
                                         std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw UserError(SourceLoc{path}, "is a directory, expected a file");
  const bool regular = S_ISREG(st.st_mode);
  if (!regular && limit.regularOnly)
    throw UserError(SourceLoc{path},
                    "not a regular file (a device, pipe or socket); " +
                        std::string(limit.what) + " must be a file");
  if (regular && static_cast<uint64_t>(st.st_size) > limit.maxBytes)
    tooLarge(path, limit, std::to_string(st.st_size) + " bytes");
  if (!regular)
    return std::nullopt;
  return static_cast<uint64_t>(st.st_size);
}

std::string readFile(const std::string &path, const FileLimit &limit) {
  const bool regular = checkInputFile(path, limit).has_value();
  struct stat st {};
  if (regular && ::stat(path.c_str(), &st) != 0)
    throw UserError(SourceLoc{path}, std::string("cannot open file: ") +
                                         std::strerror(errno));
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    throw UserError(SourceLoc{path}, std::string("cannot open file: ") +
                                         std::strerror(errno));
  // Read in chunks up to one byte past the limit: a file that grew since
  // the stat, or a device or pipe, is caught by what it delivers.
  std::string out;
  if (regular)
    out.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  int err = 0;
  while (out.size() <= limit.maxBytes) {
    size_t want = static_cast<size_t>(
        std::min<uint64_t>(sizeof buffer, limit.maxBytes + 1 - out.size()));
    size_t got = std::fread(buffer, 1, want, f);
    out.append(buffer, got);
    if (got < want) {
      if (std::ferror(f))
        err = errno;
      break;
    }
  }
  std::fclose(f);
  if (err != 0)
    throw UserError(SourceLoc{path},
                    std::string("read error: ") + std::strerror(err));
  if (out.size() > limit.maxBytes)
    tooLarge(path, limit, "");
  return out;
}

void checkNotAnInput(const std::vector<std::string> &outputs,
                     const std::vector<std::string> &inputs) {
  if (std::count_if(outputs.begin(), outputs.end(), isStdout) > 1)
    throw UserError(SourceLoc{kStdoutPath},
                    "two outputs of the command would go to standard output; "
                    "name a file for all but one",
                    ExitCode::Usage);
  // Two outputs of one command in one file: the second would replace the
  // first. Compared by device and inode when the file exists, else by
  // canonical path; a device may be named twice (`-` is counted above).
  for (size_t i = 0; i < outputs.size(); ++i)
    for (size_t j = i + 1; j < outputs.size(); ++j) {
      const std::string &a = outputs[i], &b = outputs[j];
      if (a.empty() || b.empty() || isStdout(a) || isStdout(b))
        continue;
      struct stat sa {}, sb {};
      const bool haveA = ::stat(a.c_str(), &sa) == 0;
      const bool haveB = ::stat(b.c_str(), &sb) == 0;
      bool same = false;
      if (haveA && haveB)
        same = S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev &&
               sa.st_ino == sb.st_ino;
      else if (!haveA && !haveB) {
        std::error_code ea, eb;
        const std::filesystem::path ca = std::filesystem::weakly_canonical(
            std::filesystem::absolute(a, ea), ea);
        const std::filesystem::path cb = std::filesystem::weakly_canonical(
            std::filesystem::absolute(b, eb), eb);
        same = !ea && !eb && ca == cb;
      }
      if (same)
        throw UserError(SourceLoc{b},
                        (a == b ? std::string("is given for two outputs")
                                : "is the same file as the output '" + a + "'") +
                            ": the second would replace the first; give "
                            "another output path",
                        ExitCode::Usage);
    }
  for (const std::string &output : outputs) {
    if (isStdout(output))
      continue;
    struct stat out {};
    if (output.empty() || ::stat(output.c_str(), &out) != 0)
      continue;
    for (const std::string &input : inputs) {
      struct stat in {};
      if (input.empty() || ::stat(input.c_str(), &in) != 0)
        continue;
      if (in.st_dev != out.st_dev || in.st_ino != out.st_ino)
        continue;
      // Only a regular file is lost by being written: /dev/null and the
      // like may be named twice.
      if (!S_ISREG(out.st_mode))
        continue;
      throw UserError(SourceLoc{output},
                      (input == output
                           ? std::string("is also an input of the command")
                           : "is the same file as the input '" + input + "'") +
                          ": writing the output there would replace it; give "
                          "another output path",
                      ExitCode::Usage);
    }
  }
}

namespace {

[[noreturn]] void cannotWrite(const std::string &path, int err) {
  throw UserError(SourceLoc{path},
                  std::string("cannot write file: ") + std::strerror(err));
}

} // namespace

FileSink::FileSink(const std::string &path) : path_(path), target_(path) {
  if (isStdout(path)) {
    stdout_ = true;
    return;
  }
  // A device or a pipe (`-o /dev/null`) is written in place: a rename
  // would replace it by a regular file.
  struct stat st {};
  const bool inPlace = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) &&
                       !S_ISDIR(st.st_mode);
  if (!inPlace) {
    // A symlink stays one: the file it points to is what gets replaced.
    std::error_code ec;
    if (std::filesystem::is_symlink(path, ec)) {
      std::filesystem::path resolved =
          std::filesystem::weakly_canonical(path, ec);
      if (!ec)
        target_ = resolved.string();
    }
    tmp_ = target_ + ".tmp." + std::to_string(::getpid());
  }
  file_ = std::fopen((inPlace ? target_ : tmp_).c_str(), "wb");
  if (!file_)
    fail(errno);
}

FileSink::~FileSink() {
  if (!committed_)
    discard();
}

void FileSink::write(std::string_view bytes) {
  SPYRE_ASSERT(!committed_, "a write to the committed file '" + path_ + "'");
  if (stdout_) {
    std::cout.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!std::cout.good())
      throw UserError(SourceLoc{path_}, "cannot write standard output");
    return;
  }
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    fail(errno);
}

void FileSink::commit() {
  SPYRE_ASSERT(!committed_, "'" + path_ + "' committed twice");
  if (stdout_) {
    std::cout.flush();
    if (!std::cout.good())
      throw UserError(SourceLoc{path_}, "cannot write standard output");
    committed_ = true;
    return;
  }
  // A full disk may show only when the last buffered bytes are written.
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (closed != 0)
    fail(errno);
  if (!tmp_.empty() && std::rename(tmp_.c_str(), target_.c_str()) != 0)
    fail(errno);
  committed_ = true;
}

void FileSink::fail(int err) {
  discard();
  cannotWrite(path_, err);
}

void FileSink::discard() {
  if (file_)
    std::fclose(file_);
  file_ = nullptr;
  if (!tmp_.empty())
    std::remove(tmp_.c_str());
}

void writeFileStreamed(const std::string &path,
                       const std::function<void(ByteSink &)> &produce) {
  FileSink file(path);
  produce(file);
  file.finish();
  file.commit();
}

void writeFileAtomic(const std::string &path, std::string_view bytes) {
  FileSink file(path);
  file.write(bytes);
  file.commit();
}

void checkWritable(const std::string &path) {
  if (isStdout(path))
    return;
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
