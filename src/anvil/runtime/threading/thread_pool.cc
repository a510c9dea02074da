// The CPU thread pool (see thread_pool.h) and the C entry points AnvilParallelLaunch and
// AnvilParallelBarrier that compiled kernels call.
//
// Handshake: each worker owns a cache-line slot with a `start` counter. A launch writes the job
// into the slot of every worker that has a task, then bumps its `start` (a seq_cst RMW that
// publishes the job). Workers spin on their own `start` for about kSpinTargetNanos, then sleep
// on it (futex). Finishing workers count `finished` up; the caller spins, then sleeps, on it.
// Sleep and wake pair up Dekker-style: a sleeper registers in `sleepers` before its last check,
// a waker changes the word before reading `sleepers`, both seq_cst, so one of them sees the
// other and the waker skips the syscall when nobody sleeps.
#include "anvil/runtime/threading/thread_pool.h"

#include "anvil/runtime/runtime_api.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#if defined(__linux__)
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace anvil::runtime {
namespace {

constexpr std::size_t kCacheLine = 64;
constexpr int64_t kSpinTargetNanos = 50'000;  // idle spin before sleeping: a few tens of µs
constexpr int kMaxThreads = 1024;

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "futex words must be plain 32-bit atomics");

// True while this thread runs a task of any pool; a launch made then runs serially, because
// waiting for the pool from inside it could deadlock.
thread_local bool tls_in_task = false;

// The global pool, for the exit and fork handlers, and whether prepare_fork took its lock.
ThreadPool* g_global_pool = nullptr;
bool g_fork_locked = false;
// Handles of workers a forked child inherited: those threads do not exist there, and joining
// or destroying their handles would hang or abort, so they are kept here forever.
std::vector<std::thread>* g_dead_workers = nullptr;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  asm volatile("" ::: "memory");
#endif
}

// The raw futex, rather than std::atomic::wait, avoids the extra spinning and yielding
// libstdc++ puts in front of its own futex call. Sleeps only while word == expected.
#if defined(__linux__)
inline void sleep_while_equal(std::atomic<uint32_t>& word, uint32_t expected) {
  syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
inline void wake_sleepers(std::atomic<uint32_t>& word, bool all) {
  syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, all ? INT_MAX : 1, nullptr, nullptr, 0);
}
#else
inline void sleep_while_equal(std::atomic<uint32_t>& word, uint32_t expected) {
  word.wait(expected, std::memory_order_seq_cst);
}
inline void wake_sleepers(std::atomic<uint32_t>& word, bool all) {
  all ? word.notify_all() : word.notify_one();
}
#endif

// Spins up to spin_count rounds, then sleeps, until done(word) holds; returns that value.
template <typename Done>
uint32_t await(std::atomic<uint32_t>& word, std::atomic<uint32_t>& sleepers, int spin_count,
               Done done) {
  for (int i = 0; i < spin_count; ++i) {
    uint32_t value = word.load(std::memory_order_acquire);
    if (done(value)) return value;
    cpu_relax();
  }
  sleepers.fetch_add(1, std::memory_order_seq_cst);
  uint32_t value = word.load(std::memory_order_seq_cst);
  while (!done(value)) {
    sleep_while_equal(word, value);  // returns at once if the word already moved on
    value = word.load(std::memory_order_seq_cst);
  }
  sleepers.fetch_sub(1, std::memory_order_relaxed);  // a stale nonzero costs one spurious wake
  return value;
}

// Call right after changing `word` with a seq_cst operation.
inline void wake(std::atomic<uint32_t>& word, std::atomic<uint32_t>& sleepers, bool all) {
  if (sleepers.load(std::memory_order_seq_cst) != 0) wake_sleepers(word, all);
}

void set_error(AnvilErrorKind kind, const std::string& message) {
  AnvilErrorSet(kind, message.c_str());
}

// Reads a non-negative integer environment variable; -1 when unset or malformed (with a note).
long env_integer(const char* name, long max_value) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return -1;
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0 || value > max_value) {
    std::fprintf(stderr, "anvil: ignoring %s='%s': expected an integer in [0, %ld]\n", name, text,
                 max_value);
    return -1;
  }
  return value;
}

// Spin rounds that take about kSpinTargetNanos here: a pause costs ten times more on some CPU
// generations than on others, so a fixed count would not mean a fixed time. The fastest of a
// few probes, so that being preempted during one does not skew it.
int calibrated_spin_count() {
  constexpr int kProbeRounds = 1000;
  std::atomic<uint32_t> probe{0};
  double best = 1e9;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < kProbeRounds; ++i) (void)probe.load(std::memory_order_acquire), cpu_relax();
    std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - begin;
    best = std::min(best, took.count() / kProbeRounds);
  }
  return static_cast<int>(std::clamp(kSpinTargetNanos / std::max(best, 0.5), 100.0, 1e6));
}

}  // namespace

struct ThreadPool::TaskResult {  // of the lowest failed task a thread ran
  int32_t failed_task = -1;
  int32_t status = 0;
  std::string exception;  // what() if it threw
  int32_t error_kind = 0;     // the message a failing task set through AnvilErrorSet on a
  std::string error_message;  // worker thread, carried back to the caller's thread
};

struct ThreadPool::Job {
  AnvilParallelLambda lambda = nullptr;  // null tells a worker to exit
  void* closure = nullptr;
  int32_t num_task = 0;
  int32_t stride = 1;  // threads that run tasks
  // num_task > stride: the tasks are cut into one contiguous share per thread (the slots'
  // `next`/`end`); a thread runs its own share in order, then claims what is left of the
  // others', so a thread slowed down (a busy sibling core, a page fault) takes fewer tasks while
  // in the common case every thread gets the same tasks as in the previous call (and finds their
  // data still in its cache). Null: task t runs on thread t % stride.
  WorkerSlot* shares = nullptr;
  BarrierState* barrier = nullptr;
  uint32_t finished_target = 0;  // Shared::finished once every worker of the launch is done
};

// A cache line crossing between cores costs more than the rest of a launch, so a launch moves
// just two: the slot line carries the whole job to the worker, and `finished` carries the
// completion back. Nothing else a worker touches is written by the caller, or vice versa: the
// worker writes its result line only when a task fails.
struct alignas(kCacheLine) ThreadPool::WorkerSlot {
  std::atomic<uint32_t> start{0};         // bumped by the caller once per launch this worker joins
  std::atomic<uint32_t> sleepers{0};      // 1 while the worker sleeps on `start`
  Job job;                                // written by the caller before it bumps `start`
  alignas(kCacheLine) TaskResult result;  // read by the caller after `finished`
  // This thread's share of a launch with more tasks than threads (Job::shares): tasks [next,
  // end) are unclaimed. Written by the caller before the launch is published; claimed from the
  // front by the owner, and by any thread that has run out of its own share.
  alignas(kCacheLine) std::atomic<int32_t> next{0};
  int32_t end = 0;
};

// A counter barrier whose sense is a phase number: a task remembers the phase it arrived in and
// waits for it to change; the last to arrive re-arms the count, then advances the phase.
struct ThreadPool::BarrierState {
  alignas(kCacheLine) std::atomic<uint32_t> remaining{0};  // arrivals still missing this phase
  alignas(kCacheLine) std::atomic<uint32_t> phase{0};      // what waiters spin on
  std::atomic<uint32_t> sleepers{0};
  std::atomic<bool> broken{false};  // a task failed: waiting could last forever
  int32_t participants = 0;
  bool supported = false;  // every task has its own thread
  int spin_count = 0;

  // Re-arms for a launch, writing only what changed: a write takes the line from the cores
  // that read it.
  void arm(int32_t num_task, bool every_task_has_a_thread) {
    if (participants != num_task) participants = num_task;
    if (supported != every_task_has_a_thread) supported = every_task_has_a_thread;
    auto count = static_cast<uint32_t>(num_task);
    if (remaining.load(std::memory_order_relaxed) != count)
      remaining.store(count, std::memory_order_relaxed);
    if (broken.load(std::memory_order_relaxed)) broken.store(false, std::memory_order_relaxed);
  }

  void break_all() {  // broken first: whoever sees the new phase must also see broken
    broken.store(true, std::memory_order_seq_cst);
    phase.fetch_add(1, std::memory_order_seq_cst);
    wake(phase, sleepers, true);
  }
};

struct ThreadPool::Shared {
  BarrierState barrier;
  // Bumped by each worker when it finished its tasks; only ever grows, so the caller need not
  // write it (and pull the line back) to arm a launch.
  alignas(kCacheLine) std::atomic<uint32_t> finished{0};
  std::atomic<uint32_t> caller_sleepers{0};
};

ThreadPool& ThreadPool::global() {
  static ThreadPool* pool = [] {
    // Never deleted: if a task calls exit(), the other tasks of its launch still use the pool
    // while exit handlers run. At exit, shutdown_global joins the workers instead.
    g_global_pool = new ThreadPool();
    std::atexit(&shutdown_global);
#if defined(__linux__)
    pthread_atfork(&prepare_fork, &parent_after_fork, &child_after_fork);
#endif
    return g_global_pool;
  }();
  return *pool;
}

void ThreadPool::shutdown_global() {
  if (tls_in_task) return;  // exit() from a task: its launch holds the lock and needs the workers
  std::lock_guard<std::mutex> lock(g_global_pool->mutex_);
  g_global_pool->stop_workers_locked();
}

// A forked child has only the forking thread: the pool's workers are gone there, and its first
// launch, or the join at its exit, would hang. So fork() waits for the running launch (unless
// a task forks: its launch holds the lock), and the child starts new workers.
void ThreadPool::prepare_fork() {
  g_fork_locked = !tls_in_task;
  if (g_fork_locked) g_global_pool->mutex_.lock();
}

void ThreadPool::parent_after_fork() {
  if (g_fork_locked) g_global_pool->mutex_.unlock();
}

void ThreadPool::child_after_fork() {
  ThreadPool* pool = g_global_pool;
  if (!g_fork_locked) return;  // forked by a task: its launch still runs
  int num_threads = pool->num_threads();
  if (g_dead_workers == nullptr) g_dead_workers = new std::vector<std::thread>();
  for (std::thread& worker : pool->workers_) g_dead_workers->push_back(std::move(worker));
  pool->workers_.clear();
  if (num_threads > 1) pool->start_workers_locked(num_threads);
  pool->mutex_.unlock();
}

ThreadPool::ThreadPool(int num_threads) : shared_(std::make_unique<Shared>()) {
  long spin = env_integer("ANVIL_THREAD_POOL_SPIN_COUNT", INT_MAX);
  spin_count_ = spin >= 0 ? static_cast<int>(spin) : calibrated_spin_count();
  shared_->barrier.spin_count = spin_count_;
  std::lock_guard<std::mutex> lock(mutex_);
  start_workers_locked(num_threads > 0 ? num_threads : default_num_threads());
}

ThreadPool::~ThreadPool() {
  std::lock_guard<std::mutex> lock(mutex_);
  stop_workers_locked();
}

void ThreadPool::resize(int num_threads) {
  if (tls_in_task) throw std::logic_error("ThreadPool::resize: called from inside a task");
  std::lock_guard<std::mutex> lock(mutex_);
  stop_workers_locked();
  start_workers_locked(num_threads > 0 ? num_threads : default_num_threads());
}

void ThreadPool::start_workers_locked(int num_threads) {
  num_threads = std::clamp(num_threads, 1, kMaxThreads);
  slots_ = std::make_unique<WorkerSlot[]>(num_threads);
  workers_.reserve(num_threads - 1);
  for (int i = 1; i < num_threads; ++i) {
    try {
      workers_.emplace_back(&ThreadPool::worker_main, this, i);
    } catch (const std::system_error& e) {
      // Out of threads (ulimit, container): run with what we have rather than not at all.
      std::fprintf(stderr, "anvil: thread pool runs %d of %d threads: %s\n", i, num_threads,
                   e.what());
      break;
    }
  }
  num_threads_.store(static_cast<int>(workers_.size()) + 1, std::memory_order_relaxed);
}

void ThreadPool::stop_workers_locked() {
  for (std::size_t i = 1; i <= workers_.size(); ++i) {
    slots_[i].job = Job{};  // no lambda: exit
    slots_[i].start.fetch_add(1, std::memory_order_seq_cst);
    wake_sleepers(slots_[i].start, true);
  }
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  num_threads_.store(1, std::memory_order_relaxed);
}

void ThreadPool::worker_main(int index) {
#if defined(__linux__)
  char name[16];
  std::snprintf(name, sizeof(name), "anvil-pool-%d", index);
  pthread_setname_np(pthread_self(), name);
#endif
  tls_in_task = true;  // everything this thread runs is a task
  WorkerSlot& slot = slots_[index];
  Shared& shared = *shared_;
  const int spin_count = spin_count_;  // members share a line with mutex_, which the caller writes
  uint32_t seen = 0;  // slots start at 0; reading it here instead could miss a first launch
  for (;;) {
    seen = await(slot.start, slot.sleepers, spin_count, [seen](uint32_t v) { return v != seen; });
    Job job = slot.job;  // a copy: once this worker counts itself finished, the next launch
    if (job.lambda == nullptr) return;  // may overwrite the slot
    run_tasks(job, index, slot.result);
    if (shared.finished.fetch_add(1, std::memory_order_seq_cst) + 1 == job.finished_target) {
      wake(shared.finished, shared.caller_sleepers, false);
    }
  }
}

void ThreadPool::run_tasks(const Job& job, int32_t thread_index, TaskResult& result) {
  if (result.failed_task >= 0) result = TaskResult{};  // write only after a failure
  bool was_in_task = std::exchange(tls_in_task, true);
  if (job.shares == nullptr) {
    for (int32_t task = thread_index; task < job.num_task; task += job.stride)
      run_task(job, task, thread_index, result);
  } else {
    // Its own share first, then the others', starting with the next thread's.
    for (int32_t k = 0; k < job.stride; ++k) {
      WorkerSlot& share = job.shares[(thread_index + k) % job.stride];
      for (int32_t task; (task = share.next.fetch_add(1, std::memory_order_relaxed)) < share.end;)
        run_task(job, task, thread_index, result);
    }
  }
  tls_in_task = was_in_task;
}

void ThreadPool::run_task(const Job& job, int32_t task, int32_t thread_index, TaskResult& result) {
  AnvilParallelEnv env{job.barrier, job.num_task};  // fresh per task: a task may scribble on it
  int32_t status = 0;
  std::string what;
  try {
    status = job.lambda(task, &env, job.closure);
  } catch (const std::exception& e) {
    status = -1;
    what = *e.what() != '\0' ? e.what() : "exception with an empty message";
  } catch (...) {
    status = -1;
    what = "unknown exception";
  }
  if (status == 0) return;
  if (result.failed_task < 0) {
    result.failed_task = task;
    result.status = status;
    result.exception = std::move(what);
    // On a worker the task's message sits in this thread's error slot; take it along. On the
    // caller's thread (index 0) it is already where the caller will look.
    if (thread_index != 0 && result.exception.empty())
      result.error_message = anvil::take_kernel_error(&result.error_kind);
  }
  if (job.barrier->supported) job.barrier->break_all();
}

void ThreadPool::report_failure(const TaskResult& result, int thread_index, int32_t num_task) {
  std::string task = "AnvilParallelLaunch: task " + std::to_string(result.failed_task) + " of " +
                     std::to_string(num_task);
  if (!result.exception.empty()) {
    set_error(kAnvilErrorRuntime, task + " threw: " + result.exception);
  } else if (thread_index != 0 && !result.error_message.empty()) {
    set_error(static_cast<AnvilErrorKind>(result.error_kind), task + " on pool thread " +
                                                                  std::to_string(thread_index) + ": " +
                                                                  result.error_message);
  } else if (thread_index != 0) {
    set_error(kAnvilErrorRuntime, task + " failed with status " + std::to_string(result.status) +
                                      " on pool thread " + std::to_string(thread_index));
  }  // else it failed on this thread: its own message is the one the caller should see
}

int32_t ThreadPool::launch_serial(AnvilParallelLambda lambda, void* closure, int32_t num_task) {
  static BarrierState unsupported;  // never written: barrier() refuses it
  Job job{lambda, closure, num_task, 1, nullptr, &unsupported};
  TaskResult result;
  run_tasks(job, 0, result);
  if (result.failed_task < 0) return 0;
  report_failure(result, 0, num_task);
  return -1;
}

int32_t ThreadPool::launch(AnvilParallelLambda lambda, void* closure, int32_t num_task) {
  if (lambda == nullptr || num_task < 0) {
    set_error(kAnvilErrorValue,
              "AnvilParallelLaunch: expected a task function and num_task >= 0, got " +
                  std::string(lambda ? "a function" : "null") + " and " + std::to_string(num_task));
    return -1;
  }
  if (num_task == 0) num_task = num_threads();
  if (tls_in_task || num_task == 1) return launch_serial(lambda, closure, num_task);

  std::lock_guard<std::mutex> lock(mutex_);
  int32_t threads = num_threads();
  if (threads == 1) return launch_serial(lambda, closure, num_task);
  int32_t active = std::min(num_task, threads);
  Shared& shared = *shared_;
  uint32_t target = shared.finished.load(std::memory_order_relaxed) + (active - 1);
  Job job{lambda, closure, num_task, active, nullptr, &shared.barrier, target};
  if (num_task > active) {  // shares of q or q + 1 tasks; published with the job below
    int32_t q = num_task / active, r = num_task % active;
    for (int32_t i = 0; i < active; ++i) {
      int32_t begin = i * q + std::min(i, r);
      slots_[i].next.store(begin, std::memory_order_relaxed);
      slots_[i].end = begin + q + (i < r ? 1 : 0);
    }
    job.shares = slots_.get();
  }
  shared.barrier.arm(num_task, num_task <= threads);
  for (int32_t i = 1; i < active; ++i) {  // the seq_cst bump publishes everything above
    slots_[i].job = job;
    slots_[i].start.fetch_add(1, std::memory_order_seq_cst);
    wake(slots_[i].start, slots_[i].sleepers, false);
  }
  run_tasks(job, 0, slots_[0].result);
  await(shared.finished, shared.caller_sleepers, spin_count_,
        [target](uint32_t v) { return v == target; });

  int failed_thread = -1;
  for (int32_t i = 0; i < active; ++i) {
    int32_t task = slots_[i].result.failed_task;
    if (task >= 0 && (failed_thread < 0 || task < slots_[failed_thread].result.failed_task)) {
      failed_thread = i;
    }
  }
  if (failed_thread < 0) return 0;
  report_failure(slots_[failed_thread].result, failed_thread, num_task);
  return -1;
}

int32_t ThreadPool::barrier(int32_t task_id, AnvilParallelEnv* env) {
  auto fail = [&](AnvilErrorKind kind, const char* why) {  // strings only off the fast path
    set_error(kind, "AnvilParallelBarrier: task " + std::to_string(task_id) + " of " +
                        std::to_string(env ? env->num_task : 0) + why);
    return -1;
  };
  if (env == nullptr || env->sync_handle == nullptr) {
    return fail(kAnvilErrorValue, ": expected the env of a parallel task, got a null one");
  }
  if (env->num_task <= 1) return 0;
  BarrierState& b = *static_cast<BarrierState*>(env->sync_handle);
  if (!b.supported) {
    return fail(kAnvilErrorNotImplemented,
                " cannot wait: its launch runs several tasks per thread (more tasks than pool "
                "threads, or a nested launch); a barrier needs num_task <= num_threads");
  }
  if (task_id < 0 || task_id >= b.participants || env->num_task != b.participants) {
    return fail(kAnvilErrorValue, ": expected the task id and num_task its launch passed");
  }
  // Phase before broken: a break advances the phase after setting broken, so either we see
  // broken now or the phase we wait on will move.
  uint32_t phase = b.phase.load(std::memory_order_seq_cst);
  if (!b.broken.load(std::memory_order_seq_cst)) {
    if (b.remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      b.remaining.store(static_cast<uint32_t>(b.participants), std::memory_order_relaxed);
      b.phase.fetch_add(1, std::memory_order_seq_cst);
      wake(b.phase, b.sleepers, true);
    } else {
      await(b.phase, b.sleepers, b.spin_count, [phase](uint32_t v) { return v != phase; });
    }
    if (!b.broken.load(std::memory_order_acquire)) return 0;
  }
  return fail(kAnvilErrorRuntime, " left the barrier: another task of its launch failed");
}

int ThreadPool::default_num_threads() {
  long requested = env_integer("ANVIL_NUM_THREADS", kMaxThreads);
  if (requested > 0) return static_cast<int>(requested);
  return physical_core_count();
}

int ThreadPool::physical_core_count() {
  std::set<std::pair<int, int>> cores;
  std::ifstream cpuinfo("/proc/cpuinfo");
  int physical_id = -1;  // each processor block lists its physical id before its core id
  for (std::string line; std::getline(cpuinfo, line);) {
    std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    int value = std::atoi(line.c_str() + colon + 1);
    if (line.rfind("physical id", 0) == 0) physical_id = value;
    if (line.rfind("core id", 0) == 0) cores.emplace(physical_id, value);
  }
  int count = static_cast<int>(cores.size());
  if (count == 0) count = static_cast<int>(std::thread::hardware_concurrency());
#if defined(__linux__)
  // More threads than CPUs we may run on (taskset, cgroup cpusets) would only spin against
  // each other.
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0) {
    count = count > 0 ? std::min(count, CPU_COUNT(&allowed)) : CPU_COUNT(&allowed);
  }
#endif
  return std::clamp(count, 1, kMaxThreads);
}

}  // namespace anvil::runtime

// ---- C entry points (c_abi.h). No exception may cross into C. ----

namespace {

template <typename Call>
int32_t c_entry(const char* name, Call call) {
  char message[512];
  try {
    return call();
  } catch (const std::exception& e) {
    std::snprintf(message, sizeof(message), "%s: %s", name, e.what());
  } catch (...) {
    std::snprintf(message, sizeof(message), "%s: unknown exception", name);
  }
  AnvilErrorSet(kAnvilErrorRuntime, message);
  return -1;
}

}  // namespace

extern "C" int32_t AnvilParallelLaunch(AnvilParallelLambda lambda, void* closure,
                                       int32_t num_task) {
  return c_entry("AnvilParallelLaunch", [&] {
    return anvil::runtime::ThreadPool::global().launch(lambda, closure, num_task);
  });
}

extern "C" int32_t AnvilParallelBarrier(int32_t task_id, AnvilParallelEnv* env) {
  return c_entry("AnvilParallelBarrier",
                 [&] { return anvil::runtime::ThreadPool::barrier(task_id, env); });
}
