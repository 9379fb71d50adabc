#pragma once
// A thread kept to run one task after another. A batch worker keeps a pair
// from file to file for run_pipeline's reader and writer (RunOptions::
// threads): a thread made for each file maps its stack into the process's
// memory map and gives it back after, and those changes wait for, and hold
// up, every other thread's page faults. A batch of 2,400 files on 32 workers
// made two threads a file (stop 44's profile, bench/RESULTS.md).
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace sigstream {

class TaskThread {
public:
  TaskThread() = default;
  ~TaskThread(); // waits for a task still running, then ends the thread
  TaskThread(const TaskThread&) = delete;
  TaskThread& operator=(const TaskThread&) = delete;

  // Runs `task` on this thread, made by the first call (so it inherits the
  // caller's scheduling priority, as a std::thread would). The task must not
  // throw (as on a std::thread, that ends the process). Throws
  // std::system_error where no thread can be made, and std::logic_error
  // while the previous task has not been waited for.
  void start(std::function<void()> task);
  // As start(), but false (and `task` left as it was) while a task is given
  // and not yet waited for.
  [[nodiscard]] bool try_start(std::function<void()>& task);
  // Waits until the task given to start() has returned (at once if none
  // runs); what the task captured is gone by then.
  void wait();

private:
  void loop();
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool busy_ = false; // a task given, not yet returned
  bool stop_ = false;
};

// One task on a kept thread when there is one and it is free, else on a
// thread of its own (a caller running two runs at once on one RunThreads
// gets a second thread, not an error); waited for by join() or, at the
// latest, when it goes.
class JoinedTask {
public:
  JoinedTask(TaskThread* kept, std::function<void()> task);
  ~JoinedTask() { join(); }
  JoinedTask(const JoinedTask&) = delete;
  JoinedTask& operator=(const JoinedTask&) = delete;
  void join();

private:
  TaskThread* kept_;
  std::thread own_;
  bool joined_ = false;
};

} // namespace sigstream
