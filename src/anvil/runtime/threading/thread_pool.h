// The CPU thread pool behind AnvilParallelLaunch / AnvilParallelBarrier: generated kernels split
// a parallel loop into tasks and hand them to this pool. The point is a low cost per launch, so
// there is no queue: each thread has a contiguous share of the tasks and claims them from an
// atomic counter of its own (a thread that runs out claims from the others'), idle workers spin
// briefly before sleeping, and the caller runs the first share itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "anvil/runtime/c_abi.h"

namespace anvil::runtime {

// A fixed set of worker threads plus the calling thread. Thread-safe: any number of outside
// threads may launch concurrently (their launches run one after another).
//
// Launch contract:
//  - num_task == 0 means num_threads(). Every task id in [0, num_task) runs exactly once.
//  - With num_task <= num_threads(), task t runs on pool thread t; pool thread 0 is the caller.
//    With more tasks than threads, the tasks are cut into contiguous shares, one per thread (the
//    caller's first); a thread runs its share in order, then claims what is left of the
//    others'. So a thread slowed down by something else on the machine takes fewer tasks, and
//    otherwise each thread gets the same tasks from call to call (their data stays in its cache).
//  - launch returns after every task finished: 0 if all returned 0, otherwise -1 with a message
//    recorded through AnvilErrorSet (a task that failed on the calling thread keeps its own).
//    An exception thrown by a task counts as a failure; it never leaves launch.
//  - A launch from inside a task (nested parallelism) runs all its tasks serially on the
//    current thread, so it cannot deadlock.
//
// Barrier contract: barrier() works only when every task has its own thread, i.e.
// 1 < num_task <= num_threads() and the launch is not nested; otherwise it fails with -1 (a
// num_task of 1 always passes). Every task must call it the same number of times. When a task
// of the launch fails (returns nonzero), the barrier is broken: waiting and later barrier
// calls return -1 instead of hanging.
class ThreadPool {
 public:
  // The process-wide pool the C entry points use, created on first use with
  // default_num_threads() threads. Its workers are joined at exit (unless a task calls exit());
  // launches after that run serially. fork() waits for its running launch, and the child
  // process gets fresh workers. (Other pools are not fork-safe.)
  static ThreadPool& global();

  // num_threads <= 0 means default_num_threads(). When the system refuses to create some
  // threads, the pool runs with fewer (and says so on stderr).
  explicit ThreadPool(int num_threads = 0);
  // Joins the workers. Must not run inside one of this pool's tasks.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that run tasks, the calling thread included.
  int num_threads() const { return num_threads_.load(std::memory_order_relaxed); }
  // Pause rounds an idle thread spins before sleeping: ANVIL_THREAD_POOL_SPIN_COUNT when set,
  // otherwise calibrated to about 50 µs on this machine.
  int spin_count() const { return spin_count_; }

  // Runs lambda(task_id, env, closure) for every task id; see the launch contract above.
  // Invalid arguments (null lambda, negative num_task) return -1 with a message.
  int32_t launch(AnvilParallelLambda lambda, void* closure, int32_t num_task);

  // Blocks until all env->num_task tasks of the launch that produced env reached the barrier.
  // Static because everything it needs travels in env->sync_handle.
  static int32_t barrier(int32_t task_id, AnvilParallelEnv* env);

  // Waits until no launch is running, then restarts with num_threads threads (<= 0: default).
  // For tests and benchmarks. Throws std::logic_error when called from inside a task.
  void resize(int num_threads);

  // ANVIL_NUM_THREADS when it holds a positive integer, otherwise physical_core_count().
  static int default_num_threads();
  // Distinct (physical id, core id) pairs in /proc/cpuinfo, capped by the CPUs this process
  // may run on; std::thread::hardware_concurrency() when /proc/cpuinfo has no such fields.
  static int physical_core_count();

 private:
  struct TaskResult;
  struct WorkerSlot;
  struct BarrierState;
  struct Job;
  struct Shared;

  static void run_tasks(const Job& job, int32_t thread_index, TaskResult& result);
  static void run_task(const Job& job, int32_t task, int32_t thread_index, TaskResult& result);
  static int32_t launch_serial(AnvilParallelLambda lambda, void* closure, int32_t num_task);
  static void report_failure(const TaskResult& result, int thread_index, int32_t num_task);
  static void shutdown_global();
  static void prepare_fork();
  static void parent_after_fork();
  static void child_after_fork();
  void worker_main(int index);
  void start_workers_locked(int num_threads);
  void stop_workers_locked();

  std::mutex mutex_;  // serialises launches from different outside threads, and resize
  std::atomic<int> num_threads_{1};
  int spin_count_ = 0;
  std::unique_ptr<WorkerSlot[]> slots_;  // one per pool thread; slot 0 is the caller's
  std::unique_ptr<Shared> shared_;       // the launch's barrier and completion count
  std::vector<std::thread> workers_;
};

}  // namespace anvil::runtime
