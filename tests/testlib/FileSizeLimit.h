// A full disk for tests: a limit on the size of the files this process and
// the tools it starts write.
#pragma once

#include <csignal>

#include <sys/resource.h>

namespace spyre::test {

/// Limits the size of files written while it is in scope (RLIMIT_FSIZE,
/// inherited by child processes). Past the limit a write fails with EFBIG
/// ("File too large") instead of raising SIGXFSZ, which is ignored
/// meanwhile, as a disk that fills up part way through a write.
class FileSizeLimit {
public:
  explicit FileSizeLimit(rlim_t bytes) {
    oldHandler_ = std::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &old_);
    struct rlimit limit = old_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, oldHandler_);
  }
  FileSizeLimit(const FileSizeLimit &) = delete;
  FileSizeLimit &operator=(const FileSizeLimit &) = delete;

private:
  struct rlimit old_ {};
  void (*oldHandler_)(int) = nullptr;
};

} // namespace spyre::test
