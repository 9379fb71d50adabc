// A thread kept for one task after another (core/task_thread.hpp): a batch
// worker's file reader and writer. Tasks run in order on the one thread,
// each waited for; a second start before the wait is refused; the thread
// keeps the priority of the thread that made it. (Every batch test runs its
// files' readers and writers on a worker's kept pair.)
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/task_thread.hpp"

namespace sigstream {
namespace {

TEST(TaskThread, RunsEachTaskOnOneThreadAndWaitsForIt) {
  TaskThread t;
  t.wait(); // none given: at once
  std::vector<std::thread::id> ran;
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) {
    t.start([&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(i == 2 ? 30 : 1));
      ran.push_back(std::this_thread::get_id());
      order.push_back(i);
    });
    t.wait();
    ASSERT_EQ(order.size(), static_cast<std::size_t>(i + 1)) << "wait() returned before the task";
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  for (const std::thread::id id : ran)
    EXPECT_EQ(id, ran.front());
  EXPECT_NE(ran.front(), std::this_thread::get_id());
}

TEST(TaskThread, AStartBeforeTheWaitIsRefusedAndTheTaskStillRuns) {
  std::atomic<bool> release{false}, ran_first{false}, ran_second{false};
  TaskThread t;
  t.start([&] {
    while (!release.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ran_first = true;
  });
  EXPECT_THROW(t.start([&] { ran_second = true; }), std::logic_error);
  std::function<void()> second = [&] { ran_second = true; };
  EXPECT_FALSE(t.try_start(second));
  ASSERT_TRUE(second) << "a refused task is left to the caller";
  release = true;
  t.wait();
  EXPECT_TRUE(ran_first.load());
  EXPECT_FALSE(ran_second.load());
  EXPECT_TRUE(t.try_start(second));
  t.wait();
  EXPECT_TRUE(ran_second.load());
}

TEST(TaskThread, WhatATaskCapturedIsGoneWhenTheWaitReturns) {
  // A run's reader captures its queues and source by reference: the caller
  // destroys them right after the wait.
  auto held = std::make_shared<int>(7);
  TaskThread t;
  t.start([held] { EXPECT_EQ(*held, 7); });
  t.wait();
  EXPECT_EQ(held.use_count(), 1);
}

TEST(TaskThread, ItsGoingWaitsForTheTaskRunning) {
  std::atomic<bool> done{false};
  {
    TaskThread t;
    t.start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      done = true;
    });
  }
  EXPECT_TRUE(done.load());
}

TEST(TaskThread, KeepsThePriorityOfTheThreadThatMadeIt) {
  // A batch's CPU workers beside the GPUs run at nice + 10: their files'
  // readers and writers too, as threads made by them would.
  int seen = -100, made_with = -100;
  std::thread maker([&] {
    errno = 0;
    const int now = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    ASSERT_EQ(errno, 0);
    ASSERT_EQ(setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), now + 3), 0);
    made_with = now + 3;
    TaskThread t;
    t.start([&] { seen = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())); });
    t.wait();
  });
  maker.join();
  EXPECT_EQ(seen, std::min(made_with, 19));
}

TEST(JoinedTask, RunsOnTheKeptThreadOrOnItsOwn) {
  TaskThread kept;
  std::thread::id first, second, own;
  {
    JoinedTask a(&kept, [&] { first = std::this_thread::get_id(); });
    a.join();
    JoinedTask b(&kept, [&] { second = std::this_thread::get_id(); });
  } // b waited for as it goes
  {
    JoinedTask c(nullptr, [&] { own = std::this_thread::get_id(); });
  }
  EXPECT_EQ(first, second);
  EXPECT_NE(own, first);
  EXPECT_NE(own, std::thread::id());
  EXPECT_NE(own, std::this_thread::get_id());
}

TEST(JoinedTask, TakesAThreadOfItsOwnWhileTheKeptOneIsBusy) {
  // Two runs at once on one RunThreads (a caller's own runner): the second
  // gets threads of its own rather than an error or a wait.
  TaskThread kept;
  std::atomic<bool> release{false};
  std::thread::id busy_on, second_on;
  JoinedTask a(&kept, [&] {
    busy_on = std::this_thread::get_id();
    while (!release.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  {
    JoinedTask b(&kept, [&] { second_on = std::this_thread::get_id(); });
    b.join();
  }
  release = true;
  a.join();
  EXPECT_NE(second_on, std::thread::id());
  EXPECT_NE(second_on, busy_on);
}

} // namespace
} // namespace sigstream
