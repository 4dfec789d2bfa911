// What one job on the engine's worker threads costs beyond its work: ThreadPool::run over
// threads with no work (each part writes one number), in one phase
// (reset, the playouts) and in two (a step: check, meet, step), with no Python.
//   built and run by bench/host_scaling.py (g++ -O3 -march=native -pthread)
//
// A step of N environments on T threads costs the loop's share plus this: where it is several
// microseconds (threads spinning on shared counters, a sleeping worker woken through the
// kernel), small batches cannot scale whatever the loop does.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "engine/thread_pool.h"

using metagraph::engine::ThreadPool;

// Median microseconds of one run(), over `calls` calls after a warm-up.
static double median_us(ThreadPool& pool, int64_t n, bool two_phases, int calls,
                        std::vector<int64_t>& sums) {
  const ThreadPool::Job touch = [&](int, int t, int64_t begin, int64_t end) {
    sums[t * 8] += end - begin;  // one cache line a thread
  };
  const ThreadPool::Job none{};
  std::vector<double> us(calls);
  for (int c = -calls / 10; c < calls; ++c) {
    const auto start = std::chrono::steady_clock::now();
    pool.run(n, touch, two_phases ? touch : none, [] { return true; });
    const auto stop = std::chrono::steady_clock::now();
    if (c >= 0) us[c] = std::chrono::duration<double, std::micro>(stop - start).count();
  }
  std::nth_element(us.begin(), us.begin() + calls / 2, us.end());
  return us[calls / 2];
}

int main(int argc, char** argv) {
  const int max_threads = argc > 1 ? std::atoi(argv[1]) : 16;
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 4096;
  const int calls = argc > 3 ? std::atoi(argv[3]) : 20000;
  std::vector<int64_t> sums(8 * static_cast<size_t>(max_threads), 0);
  std::printf("{");
  for (int threads = 1; threads <= max_threads; threads *= 2) {
    // every thread takes a part, however small the batch
    ThreadPool pool(threads, 1);
    const double one = median_us(pool, n, false, calls, sums);
    const double two = median_us(pool, n, true, calls, sums);
    std::printf("%s\"%dt\": {\"one_phase_us\": %.2f, \"two_phases_us\": %.2f}",
                threads == 1 ? "" : ", ", threads, one, two);
    if (threads < max_threads && threads * 2 > max_threads) threads = max_threads / 2;
  }
  std::printf("}\n");
  return sums[0] < 0;  // keeps the sums alive
}
