// A fixed set of worker threads that run one range-partitioned job at a time.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace metagraph::envs {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads) {
    for (int t = 1; t < num_threads; ++t) workers_.emplace_back([this, t] { loop(t); });
    num_threads_ = num_threads < 1 ? 1 : num_threads;
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return num_threads_; }

  // Calls job(begin, end) over [0, n) split into size() contiguous parts; the caller's thread
  // runs part 0. Returns when every part is done.
  void run(int64_t n, const std::function<void(int64_t, int64_t)>& job) {
    if (num_threads_ == 1 || n < 2 * num_threads_) {
      job(0, n);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      n_ = n;
      pending_ = num_threads_ - 1;
      ++generation_;
    }
    wake_.notify_all();
    job(0, part(0).second);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  std::pair<int64_t, int64_t> part(int t) const {
    const int64_t chunk = (n_ + num_threads_ - 1) / num_threads_;
    const int64_t begin = t * chunk < n_ ? t * chunk : n_;
    const int64_t end = begin + chunk < n_ ? begin + chunk : n_;
    return {begin, end};
  }
  void loop(int t) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int64_t, int64_t)>* job;
      std::pair<int64_t, int64_t> range;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        job = job_;
        range = part(t);
      }
      (*job)(range.first, range.second);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--pending_ == 0) done_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  int num_threads_ = 1;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t n_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace metagraph::envs
