// A fixed set of worker threads that run one job at a time over items [0, n), in one or two
// phases: a step first checks its inputs on every thread, all threads meet, and only then (if
// every check passed) each steps, so that checks run in parallel and still nothing moves when
// one fails.
//
// A job is cut into parts, contiguous ranges that stay the same for the same n (a host pool
// keeps flags per part between steps): one per thread, or up to `parts_per_thread` for costly
// items. Thread t runs part t, then the threads claim the other parts one at a time from a
// counter, in both phases. A thread that a virtual machine deschedules for a while, or that
// steps costlier environments (MuJoCo's contacts, an episode that restarts), then holds up
// only the part in its hands: the others take the rest.
//
// Waking a sleeping thread through the kernel costs tens of microseconds on small virtual
// machines, more than a whole step of a few hundred environments. So workers spin on an atomic
// job counter for a short while after each job (a stepping loop calls again within
// microseconds) before they sleep, and a job too small to pay for a second thread runs on the
// caller alone.
//
// One `run` at a time: the pool keeps a single job, so its owner serializes callers (the host
// pool holds its own lock; the FFI handlers share theirs through try_lock).
//
// An exception thrown by a part (a user's task that throws in its step) is caught on the
// thread that ran it, the other parts finish (a second phase does not start), and `run`
// rethrows the first one on the caller's thread: an exception escaping a worker thread would
// end the process.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace metagraph::engine {

class ThreadPool {
 public:
  // `min_per_thread`: the fewest items worth handing to another thread; `parts_per_thread`:
  // the most parts a job is cut into per thread.
  explicit ThreadPool(int num_threads, int64_t min_per_thread = 256, int parts_per_thread = 1)
      : num_threads_(num_threads < 1 ? 1 : std::min(num_threads, kMaxThreads)),  // doors: <= 1024
        min_per_thread_(min_per_thread),
        parts_per_thread_(std::max(1, parts_per_thread)),
        arrived_(num_threads_),
        finished_(num_threads_) {
    workers_.reserve(num_threads_ - 1);
    try {
      for (int t = 1; t < num_threads_; ++t) workers_.emplace_back([this, t] { loop(t); });
    } catch (const std::system_error& e) {
      // The workers already started wait on wake_: stop and join them before the members go,
      // or destroying the condition variable they sleep on never returns.
      const size_t started = workers_.size();
      stop();
      throw std::runtime_error("could not start worker thread " + std::to_string(started + 1) +
                               " of " + std::to_string(num_threads_ - 1) + " (" + e.what() +
                               "): use fewer threads or raise the limit on threads or memory " +
                               "(ulimit -u / -v, the container's pid limit)");
    }
  }
  ~ThreadPool() { stop(); }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int size() const { return num_threads_; }
  int64_t min_per_thread() const { return min_per_thread_; }

  // The most parts a job is cut into: arrays kept per part are this long.
  int max_parts() const { return num_threads_ * parts_per_thread_; }
  int parts_per_thread() const { return parts_per_thread_; }

  // A part of a job: (part, thread, begin, end). The part names the range [begin, end), the
  // same for the same n on every call; the thread (0: the caller) names what the part may
  // use as its own while it runs (a workspace, scratch), as no two parts run on one thread at
  // once.
  using Job = std::function<void(int, int, int64_t, int64_t)>;

  // The number of parts a job over n items is cut into (1: the caller alone).
  int parts(int64_t n) const {
    int64_t used = n / (min_per_thread_ > 0 ? min_per_thread_ : 1);
    if (used > max_parts()) used = max_parts();
    return used < 2 ? 1 : static_cast<int>(used);
  }
  // The range of part `part` of a job over n items cut into `parts` parts.
  static std::pair<int64_t, int64_t> range(int64_t n, int parts, int part) {
    const int64_t chunk = (n + parts - 1) / parts;
    const int64_t begin = part * chunk < n ? part * chunk : n;
    const int64_t end = begin + chunk < n ? begin + chunk : n;
    return {begin, end};
  }

  // Calls first(part, thread, begin, end) for every part of [0, n) (parts(n) of them: thread t
  // runs part t, the caller's thread part 0, and the rest go to the threads as they come
  // free); then, once every part of `first` is done and if `proceed()` (called on each thread
  // after they all met) is true, second(...) over the same parts. Returns when every part is
  // done.
  void run(int64_t n, const Job& first, const Job& second = {},
           const std::function<bool()>& proceed = {}) {
    const int parts_used = parts(n);
    if (parts_used < 2) {
      first(0, 0, 0, n);
      if (second && (!proceed || proceed())) second(0, 0, 0, n);
      return;
    }
    const int used = std::min(num_threads_, parts_used);
    thrown_ = nullptr;
    failed_.store(false, std::memory_order_relaxed);
    first_ = &first;
    second_ = second ? &second : nullptr;
    proceed_ = proceed ? &proceed : nullptr;
    n_ = n;
    parts_ = parts_used;
    claimed_[0].job.store(0, std::memory_order_relaxed);
    claimed_[1].job.store(0, std::memory_order_relaxed);
    // The job's number and its number of threads in one word: a thread with no share in it
    // reads nothing else of it, so the next job can be written while it looks.
    const uint64_t job =
        ((generation_.load(std::memory_order_relaxed) >> kThreadsBits) + 1) << kThreadsBits |
        static_cast<uint64_t>(used);
    {
      std::lock_guard<std::mutex> lock(mutex_);  // pairs with a worker about to sleep
      generation_.store(job, std::memory_order_release);
    }
    wake_.notify_all();
    work(0, job);
    all_reached(finished_, job, 1);
    first_ = second_ = nullptr;
    proceed_ = nullptr;
    if (failed_.load(std::memory_order_acquire)) std::rethrow_exception(thrown_);
  }

 private:
  static constexpr int kThreadsBits = 16;
  static constexpr int kMaxThreads = (1 << kThreadsBits) - 1;
  // The last job (generation_'s word) each thread reached a point of, one cache line a thread.
  struct alignas(64) Mark {
    std::atomic<uint64_t> job{0};
  };

  // Wakes every worker to exit and joins them.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true);
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }
  static int threads_of(uint64_t job) { return static_cast<int>(job & kMaxThreads); }
  // Waits for `done()`, which other threads make true within a part's time: spinning with the
  // CPU's pause hint for the first few thousand tries (a pause is 10-140 cycles by CPU: at
  // most about 0.2 ms in all), as a yield is a system call that can hold the waiter past the
  // moment it was released; then yielding the core.
  template <class Done>
  static void wait_until(Done&& done) {
    for (int spins = 0; !done(); ++spins) {
      if (spins < 4096) {
        pause();
      } else {
        std::this_thread::yield();
      }
    }
  }
  // Spin for a new job for up to `kSpin`, then sleep until one comes. The spin pauses (a
  // spinning thread without the hint takes the core's pipeline from its hyperthread sibling,
  // which may be the caller's Python) and reads the clock once in 64 tries.
  uint64_t wait_for_job(uint64_t seen) {
    constexpr auto kSpin = std::chrono::microseconds(200);
    const auto until = std::chrono::steady_clock::now() + kSpin;
    uint64_t g;
    for (unsigned tries = 1;
         (g = generation_.load(std::memory_order_acquire)) == seen && !stop_.load(); ++tries) {
      pause();
      if (tries % 64 == 0 && std::chrono::steady_clock::now() > until) {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
        return generation_.load(std::memory_order_acquire);
      }
    }
    return g;
  }
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  // Thread t's share of both phases of `job`; the threads meet between the phases (also after
  // a part threw).
  void work(int t, uint64_t job) {
    claim(*first_, t, threads_of(job), claimed_[0].job);
    if (second_ == nullptr) return;
    arrived_[t].job.store(job, std::memory_order_release);
    all_reached(arrived_, job, 0);
    if (!failed_.load(std::memory_order_acquire) && (proceed_ == nullptr || (*proceed_)()))
      claim(*second_, t, threads_of(job), claimed_[1].job);
  }
  // Part t first (each thread's own, so that every thread of the job steps some environments
  // on every call, as a thread-count check expects), then the parts after the first `used`,
  // claimed one at a time until none is left.
  void claim(const Job& job, int t, int used, std::atomic<uint64_t>& counter) {
    guarded(job, t, t, range(n_, parts_, t));
    for (uint64_t p; (p = used + counter.fetch_add(1, std::memory_order_relaxed)) <
                     static_cast<uint64_t>(parts_);)
      guarded(job, static_cast<int>(p), t, range(n_, parts_, static_cast<int>(p)));
  }
  // Runs one part, keeping the first exception any part throws for `run` to rethrow.
  void guarded(const Job& job, int part, int t, std::pair<int64_t, int64_t> range) {
    try {
      job(part, t, range.first, range.second);
    } catch (...) {
      std::lock_guard<std::mutex> lock(thrown_mutex_);
      if (!failed_.load(std::memory_order_relaxed)) thrown_ = std::current_exception();
      failed_.store(true, std::memory_order_release);
    }
  }
  // Waits until marks[from..used) all show `job`. Each thread writes only its own mark and
  // the waiters read them, where one counter that every thread increments passes its cache
  // line from core to core once per thread (2-3 microseconds for 16 threads).
  void all_reached(const std::vector<Mark>& marks, uint64_t job, int from) const {
    const int used = threads_of(job);
    int i = from;
    wait_until([&] {
      while (i < used && marks[i].job.load(std::memory_order_acquire) == job) ++i;
      return i == used;
    });
  }
  void loop(int t) {
    uint64_t seen = 0;
    for (;;) {
      seen = wait_for_job(seen);
      if (stop_.load()) return;
      if (t < threads_of(seen)) {
        work(t, seen);
        finished_[t].job.store(seen, std::memory_order_release);
      }
    }
  }

  std::vector<std::thread> workers_;
  int num_threads_;
  int64_t min_per_thread_;
  int parts_per_thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  const Job* first_ = nullptr;
  const Job* second_ = nullptr;
  const std::function<bool()>* proceed_ = nullptr;
  int64_t n_ = 0;
  int parts_ = 0;
  std::vector<Mark> arrived_;   // the first phase done
  std::vector<Mark> finished_;  // the part done
  // The counters every thread spins on, 64 bytes apart (each on its own cache line, without
  // making the pool an over-aligned type for its owners): a write to a line invalidates what
  // all the others are reading from it.
  char apart0_[64];
  std::atomic<uint64_t> generation_{0};
  char apart1_[64];
  std::atomic<bool> stop_{false};
  char apart2_[64];
  Mark claimed_[2];  // the next part of each phase to claim
  std::mutex thrown_mutex_;
  std::exception_ptr thrown_;  // the first exception a part threw in this run
  std::atomic<bool> failed_{false};
};

// Worker threads for in-graph steps (the `num_threads` attribute), shared by every handler of a
// compiled module. One job at a time: a caller that finds them busy (two programs stepping at
// once) runs on its own thread, which gives the same results. Throws std::runtime_error when
// the workers cannot be started (nothing has been stepped then). The arguments after n are
// ThreadPool::run's.
inline void parallel_run(int num_threads, int64_t min_per_thread, int parts_per_thread,
                         int64_t n, const ThreadPool::Job& first, const ThreadPool::Job& second = {},
                         const std::function<bool()>& proceed = {}) {
  static std::mutex guard;
  static std::unique_ptr<ThreadPool> pool;
  std::unique_lock<std::mutex> lock(guard, std::try_to_lock);
  if (num_threads <= 1 || !lock.owns_lock()) {
    first(0, 0, 0, n);
    if (second && (!proceed || proceed())) second(0, 0, 0, n);
    return;
  }
  if (!pool || pool->size() != num_threads || pool->min_per_thread() != min_per_thread ||
      pool->parts_per_thread() != parts_per_thread)
    pool = std::make_unique<ThreadPool>(num_threads, min_per_thread, parts_per_thread);
  pool->run(n, first, second, proceed);
}

}  // namespace metagraph::engine
