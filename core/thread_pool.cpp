#include "core/thread_pool.hpp"

#include <sched.h>

#include <algorithm>
#include <system_error>

namespace sigstream {

ThreadPool::ThreadPool(int threads) {
  if (threads < 1)
    threads = 1;
  workers_.reserve(static_cast<std::size_t>(threads));
  try {
    for (int i = 0; i < threads; ++i)
      workers_.emplace_back([this] { work(); });
  } catch (const std::system_error&) {
    // Fewer threads than asked (a process or pids limit): the pool runs on
    // those it has (run_tasks does not depend on its size); with none, the
    // caller is told. (Thrown on with some running, the members would be
    // destroyed under them: a hang in the condition variable, or terminate.)
    if (workers_.empty())
      throw;
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& w : workers_)
    w.join();
}

void ThreadPool::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty())
        return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

int hardware_threads() noexcept {
  // Asked once: glibc answers by reading /sys (microseconds), which a small
  // call from Python would pay every time.
  // The CPUs this process may run on (a Slurm allocation, a container's
  // cpuset, taskset), not every CPU of the machine.
  static const int threads = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
      return CPU_COUNT(&set);
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
  }();
  return threads;
}

void run_tasks(ThreadPool& pool, std::int64_t tasks,
               const std::function<void(std::int64_t)>& body) {
  std::vector<std::future<void>> done;
  done.reserve(static_cast<std::size_t>(std::max<std::int64_t>(tasks - 1, 0)));
  std::exception_ptr failure;
  try {
    for (std::int64_t t = 1; t < tasks; ++t)
      done.push_back(pool.enqueue([&body, t] { body(t); }));
    if (tasks > 0)
      body(0);
  } catch (...) {
    failure = std::current_exception();
  }
  for (auto& f : done) {
    try {
      f.get();
    } catch (...) {
      if (!failure)
        failure = std::current_exception();
    }
  }
  if (failure)
    std::rethrow_exception(failure);
}

} // namespace sigstream
