// Unit tests for the CPU thread pool (thread_pool.h) and its C entry points: which tasks run
// where, results, barriers, failures, nesting, concurrency, sizing, process exit and fork.
// Standalone build: link an AnvilErrorSet (the runtime's) plus -lgtest -lgtest_main -pthread.
#include "anvil/runtime/threading/thread_pool.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "anvil/runtime/runtime_api.h"

namespace anvil::runtime {
namespace {

// Runs any callable `f(task_id, env) -> int32_t` as a parallel lambda.
template <typename F>
int32_t launch_with(ThreadPool& pool, int32_t num_task, F&& f) {
  using Fn = std::remove_reference_t<F>;
  return pool.launch(
      [](int32_t task, AnvilParallelEnv* env, void* closure) -> int32_t {
        return (*static_cast<Fn*>(closure))(task, env);
      },
      &f, num_task);
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_old_ = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() { had_old_ ? (void)setenv(name_, old_.c_str(), 1) : (void)unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_old_ = false;
};

constexpr int kPoolSizes[] = {1, 2, 4};

TEST(ThreadPool, EveryTaskIdRunsExactlyOnce) {
  for (int size : kPoolSizes) {
    ThreadPool pool(size);
    ASSERT_EQ(pool.num_threads(), size);
    for (int32_t num_task : {0, 1, 2, 3, 7, 64}) {
      int32_t expected = num_task == 0 ? size : num_task;
      std::vector<std::atomic<int>> runs(expected);
      std::atomic<int> wrong_env{0};
      int32_t rc = launch_with(pool, num_task, [&](int32_t task, AnvilParallelEnv* env) {
        if (env->num_task != expected || env->sync_handle == nullptr) wrong_env++;
        if (task >= 0 && task < expected) runs[task]++;
        return 0;
      });
      EXPECT_EQ(rc, 0);
      EXPECT_EQ(wrong_env.load(), 0);
      for (int32_t t = 0; t < expected; ++t) {
        EXPECT_EQ(runs[t].load(), 1)
            << "pool " << size << ", num_task " << num_task << ", task " << t;
      }
    }
  }
}

TEST(ThreadPool, MoreTasksThanThreadsRunAsSharesAndAHeldUpThreadsShareIsTakenOver) {
  ThreadPool pool(4);
  constexpr int32_t kTasks = 64;  // shares of 16: [0, 16) is the caller's, [16, 32) thread 1's...
  std::vector<std::thread::id> ran_on(kTasks);
  std::vector<int> order(kTasks);  // when each task started
  std::vector<std::atomic<int>> runs(kTasks);
  std::atomic<int> started{0};
  ASSERT_EQ(launch_with(pool, kTasks,
                        [&](int32_t task, AnvilParallelEnv*) {
                          order[task] = started++;
                          ran_on[task] = std::this_thread::get_id();
                          runs[task]++;
                          // Whoever runs task 16 is held up: the others take over what is left.
                          if (task == 16) std::this_thread::sleep_for(std::chrono::milliseconds(100));
                          return 0;
                        }),
            0);
  int after_hold = 0;  // tasks the held-up thread started after task 16
  for (int32_t t = 0; t < kTasks; ++t) {
    EXPECT_EQ(runs[t].load(), 1) << "task " << t;
    if (ran_on[t] == ran_on[16] && order[t] > order[16]) after_hold++;
  }
  // With static shares it would still run the rest of its share (15 tasks) after the hold.
  EXPECT_LT(after_hold, 8);
  // A thread runs the tasks it claims from one share in increasing order.
  for (int32_t t = 1; t < kTasks; ++t) {
    if (ran_on[t] == ran_on[t - 1] && t % 16 != 0) {
      EXPECT_GT(order[t], order[t - 1]) << "task " << t;
    }
  }
}

TEST(ThreadPool, ParallelSumMatchesSerialSum) {
  constexpr uint32_t kSeed = 20240611;
  std::printf("seed %u\n", kSeed);
  std::mt19937_64 rng(kSeed);
  std::vector<int64_t> data(1 << 18);
  for (int64_t& x : data) x = static_cast<int64_t>(rng() % 2001) - 1000;
  int64_t serial = 0;
  for (int64_t x : data) serial += x;

  for (int size : kPoolSizes) {
    ThreadPool pool(size);
    for (int32_t num_task : {0, 3, 7, 64}) {
      int32_t tasks = num_task == 0 ? size : num_task;
      std::vector<int64_t> partial(tasks, 0);
      ASSERT_EQ(launch_with(pool, num_task,
                            [&](int32_t task, AnvilParallelEnv* env) {
                              size_t n = data.size(), per = (n + env->num_task - 1) / env->num_task;
                              size_t begin = std::min(n, per * task),
                                     end = std::min(n, begin + per);
                              for (size_t i = begin; i < end; ++i) partial[task] += data[i];
                              return 0;
                            }),
                0);
      int64_t total = 0;
      for (int64_t p : partial) total += p;
      EXPECT_EQ(total, serial) << "pool " << size << ", num_task " << num_task;
    }
  }
}

TEST(ThreadPool, BarrierMakesEarlierWritesOfAllTasksVisible) {
  for (int size : {2, 4}) {
    ThreadPool pool(size);
    for (int32_t num_task = 2; num_task <= size; ++num_task) {
      constexpr int kRounds = 200;
      std::vector<int64_t> cells(num_task, -1);
      std::atomic<int> bad_reads{0}, barrier_errors{0};
      int32_t rc = launch_with(pool, num_task, [&](int32_t task, AnvilParallelEnv* env) {
        for (int round = 0; round < kRounds; ++round) {
          cells[task] = int64_t{round} * 1000 + task;  // phase 1: write my cell
          if (ThreadPool::barrier(task, env) != 0) barrier_errors++;
          for (int32_t other = 0; other < env->num_task; ++other) {  // phase 2: read all
            if (cells[other] != int64_t{round} * 1000 + other) bad_reads++;
          }
          if (ThreadPool::barrier(task, env) != 0) barrier_errors++;
        }
        return 0;
      });
      EXPECT_EQ(rc, 0);
      EXPECT_EQ(bad_reads.load(), 0) << "pool " << size << ", num_task " << num_task;
      EXPECT_EQ(barrier_errors.load(), 0);
    }
  }
}

TEST(ThreadPool, BarrierWithOneTaskPasses) {
  ThreadPool pool(2);
  EXPECT_EQ(launch_with(
                pool, 1,
                [](int32_t task, AnvilParallelEnv* env) { return ThreadPool::barrier(task, env); }),
            0);
}

TEST(ThreadPool, BarrierFailsWhenTasksShareAThread) {
  ThreadPool pool(2);
  std::atomic<int> refused{0};
  int32_t rc = launch_with(pool, 5, [&](int32_t task, AnvilParallelEnv* env) {
    int32_t status = ThreadPool::barrier(task, env);
    if (status != 0) refused++;
    return status;
  });
  EXPECT_NE(rc, 0);
  EXPECT_EQ(refused.load(), 5);
}

TEST(ThreadPool, FailingTaskMakesLaunchFailButAllTasksRun) {
  for (int size : kPoolSizes) {
    ThreadPool pool(size);
    for (int32_t failing : {0, 1, 6}) {
      std::atomic<int> ran{0};
      int32_t rc = launch_with(pool, 7, [&](int32_t task, AnvilParallelEnv*) {
        ran++;
        return task == failing ? 42 : 0;
      });
      EXPECT_EQ(rc, -1) << "pool " << size << ", failing task " << failing;
      EXPECT_EQ(ran.load(), 7);
    }
  }
}

TEST(ThreadPool, ThrowingTaskMakesLaunchFailWithoutEscaping) {
  for (int size : kPoolSizes) {
    ThreadPool pool(size);
    int32_t rc = launch_with(pool, 4, [](int32_t task, AnvilParallelEnv*) -> int32_t {
      if (task == 3) throw std::runtime_error("task three broke");
      return 0;
    });
    EXPECT_EQ(rc, -1);
  }
}

TEST(ThreadPool, FailingTaskReleasesTasksWaitingAtTheBarrier) {
  ThreadPool pool(4);
  std::atomic<int> released_with_error{0};
  int32_t rc = launch_with(pool, 4, [&](int32_t task, AnvilParallelEnv* env) {
    if (task == 2) return 1;  // never reaches the barrier
    if (ThreadPool::barrier(task, env) != 0) released_with_error++;
    return 0;
  });
  EXPECT_EQ(rc, -1);
  EXPECT_EQ(released_with_error.load(), 3);
  // The pool, barrier included, works again on the next launch.
  EXPECT_EQ(launch_with(
                pool, 4,
                [](int32_t task, AnvilParallelEnv* env) { return ThreadPool::barrier(task, env); }),
            0);
}

TEST(ThreadPool, NestedLaunchRunsSeriallyOnTheTaskThread) {
  for (int size : kPoolSizes) {
    ThreadPool pool(size);
    constexpr int32_t kInner = 8;
    std::vector<std::atomic<int>> inner_runs(size * kInner);
    std::atomic<int> wrong_thread{0}, inner_barrier_errors{0};
    int32_t rc = launch_with(pool, 0, [&](int32_t outer, AnvilParallelEnv*) {
      std::thread::id self = std::this_thread::get_id();
      return launch_with(pool, kInner, [&](int32_t inner, AnvilParallelEnv* env) {
        if (std::this_thread::get_id() != self) wrong_thread++;
        // A barrier cannot work when one thread runs every task: it must refuse, not hang.
        if (ThreadPool::barrier(inner, env) == 0) inner_barrier_errors++;
        inner_runs[outer * kInner + inner]++;
        return 0;
      });
    });
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(wrong_thread.load(), 0);
    EXPECT_EQ(inner_barrier_errors.load(), 0);
    for (auto& runs : inner_runs) EXPECT_EQ(runs.load(), 1);
  }
}

TEST(ThreadPool, InvalidArgumentsFail) {
  ThreadPool pool(2);
  EXPECT_EQ(pool.launch(nullptr, nullptr, 2), -1);
  EXPECT_EQ(launch_with(pool, -1, [](int32_t, AnvilParallelEnv*) { return 0; }), -1);
  EXPECT_EQ(ThreadPool::barrier(0, nullptr), -1);
  AnvilParallelEnv no_handle{nullptr, 2};
  EXPECT_EQ(ThreadPool::barrier(0, &no_handle), -1);
}

TEST(ThreadPool, ThousandBackToBackLaunches) {
  for (int size : kPoolSizes) {
    ThreadPool pool(size);
    std::atomic<int64_t> total{0};
    for (int i = 0; i < 1000; ++i) {
      ASSERT_EQ(launch_with(pool, 0,
                            [&](int32_t task, AnvilParallelEnv*) {
                              total += task + 1;
                              return 0;
                            }),
                0);
    }
    EXPECT_EQ(total.load(), int64_t{1000} * size * (size + 1) / 2);
  }
}

TEST(ThreadPool, TwoOutsideThreadsLaunchConcurrently) {
  ThreadPool pool(4);
  constexpr int kLaunches = 500;
  std::atomic<int64_t> runs[2] = {0, 0};
  std::atomic<int> failures{0};
  auto client = [&](int who) {
    for (int i = 0; i < kLaunches; ++i) {
      int32_t num_task = 1 + (i + who) % 6;  // some fit the pool, some are chunked
      if (launch_with(pool, num_task, [&](int32_t task, AnvilParallelEnv* env) {
            runs[who]++;
            return num_task <= 4 && num_task > 1 ? ThreadPool::barrier(task, env) : 0;
          }) != 0) {
        failures++;
      }
    }
  };
  std::thread a(client, 0), b(client, 1);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  int64_t expected[2] = {0, 0};
  for (int who = 0; who < 2; ++who) {
    for (int i = 0; i < kLaunches; ++i) expected[who] += 1 + (i + who) % 6;
    EXPECT_EQ(runs[who].load(), expected[who]);
  }
}

TEST(ThreadPool, ResizeChangesTheThreadCount) {
  ThreadPool pool(2);
  for (int size : {3, 1, 4}) {
    pool.resize(size);
    EXPECT_EQ(pool.num_threads(), size);
    std::atomic<int> ran{0};
    EXPECT_EQ(launch_with(pool, 0, [&](int32_t, AnvilParallelEnv*) { return ++ran, 0; }), 0);
    EXPECT_EQ(ran.load(), size);
  }
  pool.resize(0);
  EXPECT_EQ(pool.num_threads(), ThreadPool::default_num_threads());
}

TEST(ThreadPool, WorkersThatSleepAtOnceStillWake) {
  ScopedEnv no_spin("ANVIL_THREAD_POOL_SPIN_COUNT", "0");
  ThreadPool pool(4);
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(launch_with(pool, 4,
                          [](int32_t task, AnvilParallelEnv* env) {
                            return ThreadPool::barrier(task, env);
                          }),
              0);
  }
}

TEST(ThreadPool, NumThreadsEnvironmentVariableIsRespected) {
  {
    ScopedEnv env("ANVIL_NUM_THREADS", "3");
    EXPECT_EQ(ThreadPool::default_num_threads(), 3);
    ThreadPool pool;
    EXPECT_EQ(pool.num_threads(), 3);
  }
  for (const char* invalid : {"0", "-2", "abc", "4x"}) {
    ScopedEnv env("ANVIL_NUM_THREADS", invalid);
    EXPECT_EQ(ThreadPool::default_num_threads(), ThreadPool::physical_core_count()) << invalid;
  }
}

TEST(ThreadPool, GlobalPoolTakesItsSizeFromTheEnvironment) {
  // A fresh process: the parent's global pool may already exist with another size.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("ANVIL_NUM_THREADS", "3", 1);
        std::_Exit(ThreadPool::global().num_threads() == 3 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ThreadPool, ProcessExitJoinsSleepingWorkers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("ANVIL_NUM_THREADS", "3", 1);
        setenv("ANVIL_THREAD_POOL_SPIN_COUNT", "0", 1);  // workers go to sleep at once
        AnvilParallelLaunch([](int32_t, AnvilParallelEnv*, void*) { return 0; }, nullptr, 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::exit(0);  // runs the global pool's destructor
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ThreadPool, ExitFromInsideATaskDoesNotHang) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (int32_t exiting_task : {0, 1}) {  // on the caller, and on a worker
    EXPECT_EXIT(
        {
          setenv("ANVIL_NUM_THREADS", "2", 1);
          static int32_t exiting;
          exiting = exiting_task;
          AnvilParallelLaunch(
              [](int32_t task, AnvilParallelEnv*, void*) -> int32_t {
                if (task == exiting) std::exit(0);
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                return 0;
              },
              nullptr, 2);
          std::exit(1);
        },
        ::testing::ExitedWithCode(0), "")
        << "exit from task " << exiting_task;
  }
}

#if defined(__SANITIZE_THREAD__)
#define ANVIL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ANVIL_TSAN 1
#endif
#endif

TEST(ThreadPool, ForkedChildGetsAWorkingGlobalPool) {
#if defined(ANVIL_TSAN)
  GTEST_SKIP() << "ThreadSanitizer cannot start threads after a multi-threaded fork";
#endif
  ThreadPool& pool = ThreadPool::global();
  if (pool.num_threads() < 2) pool.resize(2);
  int32_t threads = pool.num_threads();
  auto count = [](int32_t, AnvilParallelEnv*, void* closure) -> int32_t {
    ++*static_cast<std::atomic<int>*>(closure);
    return 0;
  };
  std::atomic<int> ran{0};
  ASSERT_EQ(AnvilParallelLaunch(count, &ran, 0), 0);  // the parent's workers are up
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(10);  // a hang becomes a failure
    std::atomic<int> child_ran{0};
    bool ok = AnvilParallelLaunch(count, &child_ran, 0) == 0 && child_ran == threads &&
              ThreadPool::global().num_threads() == threads;
    std::exit(ok ? 0 : 3);  // exit joins the child's workers
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ran = 0;
  EXPECT_EQ(AnvilParallelLaunch(count, &ran, 0), 0);  // the parent still works
  EXPECT_EQ(ran.load(), threads);
}

TEST(ThreadPool, PhysicalCoreCountIsPositive) {
  int cores = ThreadPool::physical_core_count();
  std::printf("physical cores: %d\n", cores);
  EXPECT_GE(cores, 1);
}

TEST(ThreadPoolCAbi, LaunchAndBarrierThroughTheGlobalPool) {
  int32_t threads = ThreadPool::global().num_threads();
  std::vector<std::atomic<int>> runs(threads);
  auto lambda = [](int32_t task, AnvilParallelEnv* env, void* closure) -> int32_t {
    auto& runs = *static_cast<std::vector<std::atomic<int>>*>(closure);
    runs[task]++;
    return AnvilParallelBarrier(task, env);
  };
  EXPECT_EQ(AnvilParallelLaunch(lambda, &runs, 0), 0);
  for (auto& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_EQ(AnvilParallelLaunch(nullptr, nullptr, 0), -1);
  EXPECT_EQ(AnvilParallelBarrier(0, nullptr), -1);
}

// A task that fails on a worker thread reports through AnvilErrorSet on that thread; the caller
// must still see the task's own message and kind.
TEST(ThreadPool, WorkerErrorMessageReachesTheCaller) {
  ThreadPool pool(2);
  auto lambda = [](int32_t task_id, AnvilParallelEnv*, void*) -> int32_t {
    if (task_id != 1) return 0;
    AnvilErrorSet(kAnvilErrorIndex, "row 17 is out of range");
    return -1;
  };
  ASSERT_NE(pool.launch(lambda, nullptr, 2), 0);
  int32_t kind = 0;
  std::string message = anvil::take_kernel_error(&kind);
  EXPECT_EQ(kind, kAnvilErrorIndex);
  EXPECT_NE(message.find("row 17 is out of range"), std::string::npos) << message;
  EXPECT_NE(message.find("task 1 of 2"), std::string::npos) << message;
}

}  // namespace
}  // namespace anvil::runtime
