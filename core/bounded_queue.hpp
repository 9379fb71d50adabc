#pragma once
// A blocking FIFO of bounded size between two threads. close() ends input
// (pop drains, then returns nullopt); abort() wakes everybody and drops items.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace sigstream {

template <typename T> class BoundedQueue {
public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // Returns false if the queue was aborted.
  bool push(T item) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return aborted_ || items_.size() < capacity_; });
    if (aborted_)
      return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return aborted_ || closed_ || !items_.empty(); });
    if (aborted_ || items_.empty())
      return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
  }

  void abort() {
    std::lock_guard lock(mutex_);
    aborted_ = true;
    items_.clear();
    not_empty_.notify_all();
    not_full_.notify_all();
  }

private:
  std::size_t capacity_;
  std::deque<T> items_;
  std::mutex mutex_;
  std::condition_variable not_empty_, not_full_;
  bool closed_ = false;
  bool aborted_ = false;
};

} // namespace sigstream
