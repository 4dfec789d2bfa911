// The engine's worker threads (engine/thread_pool.h) given jobs of changing sizes, as the
// in-graph door's handlers give them when programs of several batch sizes share the threads:
// every item of every job is run exactly once by each phase (parts claimed by whichever thread
// comes free), a part that throws is rethrown on the caller, and nothing hangs. Prints "ok" or what went wrong (exit status 1).
//   built and run by tests/components/envs/test_threads.py
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "engine/thread_pool.h"

using metagraph::engine::ThreadPool;

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 8;
  const int jobs = argc > 2 ? std::atoi(argv[2]) : 20000;
  ThreadPool pool(threads, 1, 4);  // a costly task's pool: up to 4 parts a thread
  const int64_t sizes[] = {2, 8, 3, 16, 64, 5, 1, 7};  // parts (8 threads): 2, 8, 3, 16, 32, 5, 1, 7
  std::vector<int> count(64);
  for (int j = 0; j < jobs; ++j) {
    const int64_t n = sizes[j % 8];
    for (int& c : count) c = 0;
    pool.run(
        n, [&](int, int, int64_t begin, int64_t end) { for (int64_t i = begin; i < end; ++i) count[i] += 1; },
        [&](int, int, int64_t begin, int64_t end) { for (int64_t i = begin; i < end; ++i) count[i] += 10; });
    for (int64_t i = 0; i < 64; ++i) {
      if (count[i] != (i < n ? 11 : 0)) {
        std::printf("job %d over %lld items: item %lld was run %d times (tens: second phase)\n",
                    j, static_cast<long long>(n), static_cast<long long>(i), count[i]);
        return 1;
      }
    }
    if (j % 500 == 0) {
      try {
        pool.run(64, [](int part, int, int64_t, int64_t) {
          if (part == 1) throw std::runtime_error("part 1");
        });
        std::printf("job %d: a part threw and run() returned\n", j);
        return 1;
      } catch (const std::runtime_error&) {
      }
    }
  }
  std::printf("ok\n");
  return 0;
}
