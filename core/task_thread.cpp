#include "core/task_thread.hpp"

#include <stdexcept>
#include <utility>

namespace sigstream {

TaskThread::~TaskThread() {
  {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return !busy_; });
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void TaskThread::start(std::function<void()> task) {
  if (!try_start(task))
    throw std::logic_error("TaskThread::start: the previous task was not waited for");
}

bool TaskThread::try_start(std::function<void()>& task) {
  {
    std::lock_guard lock(mutex_);
    if (busy_)
      return false;
    if (!thread_.joinable())
      thread_ = std::thread([this] { loop(); }); // may throw: nothing was given yet
    task_ = std::move(task);
    busy_ = true;
  }
  cv_.notify_all();
  return true;
}

void TaskThread::wait() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return !busy_; });
}

void TaskThread::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || task_; });
    if (!task_)
      return; // stopping, nothing given
    std::function<void()> task = std::move(task_);
    task_ = nullptr;
    lock.unlock();
    task();
    task = nullptr; // what it captured goes before the caller hears it ended
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

JoinedTask::JoinedTask(TaskThread* kept, std::function<void()> task) : kept_(kept) {
  if (kept_ != nullptr && kept_->try_start(task))
    return;
  kept_ = nullptr;
  own_ = std::thread(std::move(task));
}

void JoinedTask::join() {
  if (std::exchange(joined_, true))
    return;
  if (kept_ != nullptr)
    kept_->wait();
  else if (own_.joinable())
    own_.join();
}

} // namespace sigstream
