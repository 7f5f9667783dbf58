// Where an output's bytes go as they are made. A trace of a large model is
// gigabytes of text: its writer hands it over in pieces to a sink (a file,
// a gzip stream in front of a file, a string for tests) instead of building
// it whole in memory. The file and gzip sinks are in FileIO.h and Gzip.h.
#pragma once

#include <string>
#include <string_view>

namespace spyre {

/// Takes bytes in order, in pieces of any size.
class ByteSink {
public:
  virtual ~ByteSink() = default;
  virtual void write(std::string_view bytes) = 0;
  /// No more bytes follow: a sink that holds some back (gzip's last block
  /// and trailer) passes them on to the sink under it.
  virtual void finish() {}
};

/// Keeps the bytes in a string.
class StringSink final : public ByteSink {
public:
  void write(std::string_view bytes) override { text_.append(bytes); }
  const std::string &text() const { return text_; }
  std::string take() { return std::move(text_); }

private:
  std::string text_;
};

} // namespace spyre
