// The engine's step of CartPole against the same C++ loop written by hand, in one process,
// one thread, N environments: what the engine's generic loop and its checks cost.
//   built and run by bench/env_throughput.py (g++ -O3 -march=native, the modules' flags)
//
// "By hand": the structure of arrays, the physics loop (FastMath, vectorised), the copy of
// final observations and the reset of finished episodes, with no checks at all (what the
// classic-control core was before the engine). "Engine": Batch + check_part + step_part, the
// code both doors run (engine/batch.h), as the host pool runs it (pool.h): actions checked
// every step, states scanned on the first step and then trusted while step_part reports that
// it left them in the fast flavour's range (the in-graph door scans them every step).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "classic_control/classic_control.h"
#include "engine/batch.h"

namespace cc = metagraph::classic_control;
namespace engine = metagraph::engine;
using Task = cc::Classic<cc::CartPole>;

struct Outputs {
  std::vector<float> obs, final_obs, reward;
  std::unique_ptr<bool[]> terminated, truncated;
  explicit Outputs(int64_t n)
      : obs(n * 4), final_obs(n * 4), reward(n), terminated(new bool[n]),
        truncated(new bool[n]) {}
};

// The hand-written loop: one row per coordinate, then streams and step counts.
static void hand_step(double* x, uint64_t* rng, int64_t* steps, const int32_t* actions,
                      int64_t n, Outputs& out) {
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) {
    double s[4] = {x[i], x[n + i], x[2 * n + i], x[3 * n + i]};
    bool terminated = false;
    const double r = cc::CartPole::step<cc::FastMath>(s, actions[i], &terminated);
    x[i] = s[0]; x[n + i] = s[1]; x[2 * n + i] = s[2]; x[3 * n + i] = s[3];
    const int64_t t = steps[i] + 1;
    steps[i] = t;
    cc::CartPole::observe<cc::FastMath>(s, out.obs.data() + 4 * i);
    out.reward[i] = static_cast<float>(r);
    out.terminated[i] = terminated;
    out.truncated[i] = t >= cc::CartPole::kMaxSteps;
  }
  std::memcpy(out.final_obs.data(), out.obs.data(), sizeof(float) * 4 * n);
  for (int64_t i = 0; i < n; ++i) {
    if (out.terminated[i] || out.truncated[i]) {
      double s[4];
      cc::CartPole::reset(s, rng[i]);
      x[i] = s[0]; x[n + i] = s[1]; x[2 * n + i] = s[2]; x[3 * n + i] = s[3];
      steps[i] = 0;
      cc::CartPole::observe(s, out.obs.data() + 4 * i);
    }
  }
}

template <class F>
static double seconds(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 4096;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 2000;
  const int rounds = 5;
  std::vector<int32_t> actions(static_cast<size_t>(steps) * n);
  uint64_t seed = 1;
  for (auto& a : actions) a = static_cast<int32_t>(metagraph::engine::splitmix64(seed) & 1);
  const Task task(engine::Config("CartPole-v1", {}));

  std::vector<uint64_t> block(6 * n);
  const engine::Batch<Task> batch(task, block.data(), n);
  engine::NoWorkspace ws;
  std::vector<float> obs(4 * n);
  std::vector<double> scratch(6);
  Outputs out(n);
  double best_hand = 1e9, best_engine = 1e9;
  for (int round = 0; round < rounds; ++round) {
    for (int64_t i = 0; i < n; ++i) batch.reseed(ws, i, 0, i, obs.data() + 4 * i, scratch.data());
    best_hand = std::min(best_hand, seconds([&] {
      for (int t = 0; t < steps; ++t)
        hand_step(batch.word(0), batch.rng(), batch.steps(), actions.data() + t * n, n, out);
    }));
    for (int64_t i = 0; i < n; ++i) batch.reseed(ws, i, 0, i, obs.data() + 4 * i, scratch.data());
    const engine::StepOut<float> so{out.obs.data(), out.reward.data(), out.terminated.get(),
                                    out.truncated.get(), out.final_obs.data()};
    best_engine = std::min(best_engine, seconds([&] {
      bool trusted = false;
      for (int t = 0; t < steps; ++t) {
        engine::FirstProblem bad_action, bad_state, failed;
        const int32_t* a = actions.data() + t * n;
        const bool fast = engine::check_part(task, batch, a, 0, n, 0, bad_action, bad_state,
                                             scratch.data(), trusted);
        if (bad_action.found() || bad_state.found()) std::abort();
        engine::step_part(task, ws, batch, a, 0, n, so, fast, 0, failed, scratch.data(),
                          &trusted);
      }
    }));
  }
  const double per = 1e9 / (static_cast<double>(n) * steps);
  std::printf("N=%lld  by hand %.2f ns/step  engine %.2f ns/step  engine/hand %.3f\n",
              static_cast<long long>(n), best_hand * per, best_engine * per,
              best_engine / best_hand);
  return 0;
}
