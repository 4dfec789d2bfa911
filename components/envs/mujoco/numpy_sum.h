// NumPy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src, pairwise_sum), so that
// a sum of squares rounds exactly as `np.sum` rounds it in Gymnasium's reward terms.
#pragma once
#include <cstdint>

namespace metagraph::mujoco {

template <class T>
T numpy_sum(const T* a, int64_t n) {
  if (n < 8) {
    T res = 0;
    for (int64_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  constexpr int64_t kBlock = 128;  // NumPy's PW_BLOCKSIZE
  if (n <= kBlock) {
    T r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return numpy_sum(a, n2) + numpy_sum(a + n2, n - n2);
}

}  // namespace metagraph::mujoco
