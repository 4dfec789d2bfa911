// Deterministic per-environment random numbers: splitmix64, seeded from (seed, env index).
#pragma once
#include <cmath>
#include <cstdint>

namespace metagraph::engine {

inline uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The stream of environment `index` under `seed`: distinct indices give unrelated streams.
inline uint64_t stream_state(uint64_t seed, uint64_t index) {
  uint64_t x = seed;
  uint64_t a = splitmix64(x);
  uint64_t y = index ^ a;
  return splitmix64(y);
}

// Uniform double in [lo, hi) from the 53 high bits of the next output.
inline double uniform(uint64_t& state, double lo, double hi) {
  const double unit = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
  return lo + (hi - lo) * unit;
}

// Uniform integer in [0, count) (count >= 1), from the next output by Lemire's multiply and
// shift (no division; its bias, below count / 2^64, is nothing next to any use here).
inline uint32_t below(uint64_t& state, uint32_t count) {
  return static_cast<uint32_t>((static_cast<unsigned __int128>(splitmix64(state)) * count) >> 64);
}

// Standard normal double (Box-Muller on two uniforms; the second value is not kept, so each
// call draws exactly two numbers from the stream).
inline double standard_normal(uint64_t& state) {
  const double u1 = 1.0 - uniform(state, 0.0, 1.0);  // in (0, 1]: log is finite
  const double u2 = uniform(state, 0.0, 1.0);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.141592653589793 * u2);
}

}  // namespace metagraph::engine
