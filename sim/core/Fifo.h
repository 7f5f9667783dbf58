// A FIFO over a vector that keeps its storage when it empties, so the hot
// paths of the Machine (tokens of a counter, bursts in flight) do not
// allocate.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace spyre::sim {

template <typename T> class Fifo {
public:
  bool empty() const { return head_ == buf_.size(); }
  size_t size() const { return buf_.size() - head_; }
  T &front() { return buf_[head_]; }
  void clear() {
    buf_.clear();
    head_ = 0;
  }
  void pop_front() {
    if (++head_ == buf_.size())
      clear();
    else if (head_ >= 64 && head_ * 2 >= buf_.size()) {
      buf_.erase(buf_.begin(),
                 buf_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  void push_back(T v) { buf_.push_back(std::move(v)); }
  /// Inserts keeping the elements ordered by `less`, after equal ones.
  template <typename Less> void insertSorted(T v, Less less) {
    buf_.push_back(std::move(v));
    for (size_t i = buf_.size() - 1; i > head_ && less(buf_[i], buf_[i - 1]);
         --i)
      std::swap(buf_[i], buf_[i - 1]);
  }

private:
  std::vector<T> buf_;
  size_t head_ = 0;
};

} // namespace spyre::sim
