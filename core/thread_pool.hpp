#pragma once
// A fixed set of worker threads running queued tasks; tasks return futures.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace sigstream {

class ThreadPool {
public:
  // At least one thread; fewer than asked where the system has no more
  // (size() says how many); std::system_error where it has none.
  explicit ThreadPool(int threads);
  ~ThreadPool(); // finishes queued tasks, then joins
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  [[nodiscard]] int size() const noexcept { return static_cast<int>(workers_.size()); }

  template <typename F> auto enqueue(F&& f) -> std::future<decltype(f())> {
    auto task = std::make_shared<std::packaged_task<decltype(f())()>>(std::forward<F>(f));
    auto future = task->get_future();
    {
      std::lock_guard lock(mutex_);
      tasks_.emplace_back([task] { (*task)(); });
    }
    cv_.notify_one();
    return future;
  }

private:
  void work();
  std::vector<std::thread> workers_;
  std::deque<std::function<void()>> tasks_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

// The CPUs this process may run on (sched_getaffinity: a Slurm or container
// allocation), else the hardware threads; at least 1.
int hardware_threads() noexcept;

// body(0), ..., body(tasks - 1): the first on the calling thread, the rest on
// `pool`, none waiting for another (so a busy pool cannot deadlock); returns
// once all have ended, then rethrows the first failure.
void run_tasks(ThreadPool& pool, std::int64_t tasks, const std::function<void(std::int64_t)>& body);

} // namespace sigstream
