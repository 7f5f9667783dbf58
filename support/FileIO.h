// Reading and writing whole files with user-facing errors.
#pragma once

#include "support/ByteSink.h"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spyre {

/// The most a reader takes from one file of a format, so that a huge file or
/// a device such as /dev/zero is refused instead of read until memory runs
/// out. `what` names the format in the message. A reader whose limit is large
/// (`regularOnly`) also refuses devices, pipes and sockets up front: their
/// size is unknown, and reading gigabytes of /dev/zero before refusing it
/// would take as long as the read it prevents.
struct FileLimit {
  uint64_t maxBytes;
  const char *what;
  bool regularOnly = false;
};

inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

/// The limits of the formats spyre reads (docs/program-file.md lists them).
inline constexpr FileLimit kConfigFileLimit{kMiB, "a config"};
inline constexpr FileLimit kSweepSpecLimit{kMiB, "a sweep spec"};
inline constexpr FileLimit kAssemblyLimit{256 * kMiB, "an assembly file"};
inline constexpr FileLimit kIrTextLimit{256 * kMiB, "an IR text file"};
inline constexpr FileLimit kTextFileLimit{64 * kMiB, "a text file"};
inline constexpr FileLimit kJsonFileLimit{kGiB, "a JSON file", true};
inline constexpr FileLimit kTraceFileLimit{4 * kGiB, "a trace", true};
/// An ONNX file: read part by part, so above protobuf's 2 GiB message limit
/// (ONNX writes models above 2 GB with external data files instead).
inline constexpr FileLimit kOnnxFileLimit{64 * kGiB, "an ONNX file", true};
/// An ONNX TensorProto file (.pb): one protobuf message, at most 2 GiB.
inline constexpr FileLimit kOnnxTensorFileLimit{2 * kGiB - 1,
                                               "an ONNX tensor file", true};
/// A file of ONNX external data (weights of models above 2 GiB).
inline constexpr FileLimit kOnnxDataFileLimit{uint64_t{1} << 40,
                                             "an ONNX external data file", true};
/// A safetensors file: read by its header, one tensor at a time.
inline constexpr FileLimit kSafetensorsFileLimit{uint64_t{1} << 40,
                                                "a safetensors file", true};
inline constexpr FileLimit kModelFileLimit{2 * kGiB - 1, "a model file", true};
/// Programs and arrays hold tensor data, bounded by the largest device
/// memory a config may describe.
inline constexpr FileLimit kProgramFileLimit{64 * kGiB, "a program file", true};
inline constexpr FileLimit kNpyFileLimit{64 * kGiB, "a .npy file", true};

/// The output path that stands for standard output (`--stats -`).
inline constexpr const char *kStdoutPath = "-";

/// True when an output path is `-`, standard output. A file named `-` is
/// still reachable as `./-`.
inline bool isStdout(const std::string &path) { return path == kStdoutPath; }

/// The checks readFile makes before reading: the size of a regular file
/// within the limit, nullopt for a device or pipe the limit admits; a
/// UserError naming the path otherwise.
std::optional<uint64_t> checkInputFile(const std::string &path,
                                       const FileLimit &limit);

/// Reads a whole file as bytes, at most `limit.maxBytes`. A missing,
/// unreadable or too large file, a folder, or (for a `regularOnly` limit)
/// anything but a regular file is a UserError naming the path.
std::string readFile(const std::string &path, const FileLimit &limit);

/// Refuses, before anything is written, an output that is one of the
/// command's inputs: the same file by device and inode, so that another
/// spelling of the path or a hard link is caught too. Outputs that do not
/// exist yet pass. Two outputs in one file are refused too (by device and
/// inode, or by canonical path when neither exists yet; devices may
/// repeat). A UserError (usage) naming the output and the other path.
/// Standard output (`-`) is no file, but only one output can go there: a
/// second `-` among `outputs` is a usage error too.
void checkNotAnInput(const std::vector<std::string> &outputs,
                     const std::vector<std::string> &inputs);

/// Writes `bytes` to `path` through a temporary file in the same folder and a
/// rename, so a failed write never leaves a partial output behind. A
/// symlink is followed (the link stays); a device or pipe such as /dev/null
/// is written in place. An unwritable path is a UserError naming it. `-`
/// writes standard output.
void writeFileAtomic(const std::string &path, std::string_view bytes);

/// An output file written as its bytes come, by writeFileAtomic's rules:
/// the bytes go to `TARGET.tmp.PID` in the target's folder, which commit()
/// renames over the target; destroyed without commit() (an exception while
/// the bytes were made, a failed write) it removes the temporary file, so
/// nothing partial is left. A symlink is followed (the link stays); a device
/// or pipe is written in place; `-` streams standard output. Opening,
/// writing or committing fails with a UserError naming the path.
class FileSink final : public ByteSink {
public:
  explicit FileSink(const std::string &path);
  ~FileSink() override;
  FileSink(const FileSink &) = delete;
  FileSink &operator=(const FileSink &) = delete;

  void write(std::string_view bytes) override;
  /// Closes the file and puts it in place.
  void commit();

private:
  [[noreturn]] void fail(int err);
  void discard();

  std::string path_; ///< as given, for messages
  std::string target_;
  std::string tmp_; ///< empty when written in place
  std::FILE *file_ = nullptr;
  bool stdout_ = false;
  bool committed_ = false;
};

/// Writes to `path` what `produce` writes to the sink it is given, as it
/// comes (FileSink), and commits it once `produce` returns.
void writeFileStreamed(const std::string &path,
                       const std::function<void(ByteSink &)> &produce);

/// Fails early, before any long work, when `path` could not be written
/// later: a UserError naming it. Leaves no file behind. Standard output
/// (`-`) passes; whether it takes the bytes is checked when they are written.
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
