// Actions as a caller hands them to the host pool, in any dtype the Python door accepts
// (`actions.py`): the task's own type (int32 or float32) is copied; NumPy's other integer
// types (a discrete task) and float64 (a continuous one) are range-checked and converted.
// Both happen in the step's threaded pass, each thread for its own part, so NumPy's default
// dtypes (int64 from `integers` and `action_space.sample()`, float64) cost about what the
// task's own type does; the messages are the Python door's.
#pragma once
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "batch.h"
#include "numpy_arrays.h"

namespace metagraph::engine {

// The caller's actions: their data and NumPy type number.
struct GivenActions {
  const void* data;
  int type;
};

// Whether the host pool converts actions of NumPy type `type` into `Action` itself.
template <class Action>
bool converted_type(int type) {
  if constexpr (std::is_same_v<Action, int32_t>) {
    switch (type) {
      case NPY_BYTE: case NPY_UBYTE: case NPY_SHORT: case NPY_USHORT: case NPY_INT:
      case NPY_UINT: case NPY_LONG: case NPY_ULONG: case NPY_LONGLONG: case NPY_ULONGLONG:
        return true;
      default:
        return false;
    }
  } else {
    return type == NPY_DOUBLE;
  }
}

// The actions in `obj`: an aligned, C-contiguous, native-order NumPy array of `count` values of
// the task's type or a type `converted_type` accepts; else a TypeError (the Python door then
// converts or refuses them) or, for a wrong count, a ValueError.
template <class Action>
GivenActions given_actions(nb::handle obj, size_t count, const char* env_id) {
  if (PyArray_Check(obj.ptr())) {
    const int type = PyArray_TYPE(reinterpret_cast<PyArrayObject*>(obj.ptr()));
    if (type != kNumpyType<Action> && converted_type<Action>(type)) {
      const size_t size = PyArray_ITEMSIZE(reinterpret_cast<PyArrayObject*>(obj.ptr()));
      return {checked_data(obj, count, env_id, "actions", type, "its dtype", size), type};
    }
  }
  return {array_data<Action>(obj, count, env_id, "actions"), kNumpyType<Action>};
}

namespace detail {

// Integers of type Src into int32 actions in [0, n) for environments [begin, end); a value
// outside is named (before the cast: 2**32 is not 0) and set to -1, which the step's own check
// refuses at the same index (the first message offered for an index stays).
template <class Task, class Src>
void convert_discrete(const Task& task, const Src* src, int32_t* dst, int64_t begin,
                      int64_t end, int64_t offset, FirstProblem& bad_action) {
  const uint64_t n = static_cast<uint64_t>(task.num_actions());
  // A negative value is huge as an unsigned number: one compare covers both ends.
  auto as_unsigned = [](Src v) {
    if constexpr (std::is_signed_v<Src>)
      return static_cast<uint64_t>(static_cast<int64_t>(v));
    else
      return static_cast<uint64_t>(v);
  };
  uint32_t bad = 0;  // integers: a bool reduction does not vectorise with every compiler
  for (int64_t i = begin; i < end; ++i) {
    bad |= as_unsigned(src[i]) >= n;
    dst[i] = static_cast<int32_t>(src[i]);
  }
  if (bad == 0) return;
  bool named = false;
  for (int64_t i = begin; i < end; ++i) {
    if (as_unsigned(src[i]) < n) continue;
    if (!named)
      bad_action.offer(offset + i, task.id() + ": action " + std::to_string(src[i]) +
                                       " at index " + std::to_string(offset + i) +
                                       " is outside [0, " + std::to_string(n) + ")");
    named = true;
    dst[i] = -1;
  }
}

// Python's repr of a float64 beyond float32's range (shortest round trip, as 1e+39).
inline std::string float_repr(double v) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof(text), v, std::chars_format::scientific);
  return std::string(text, end.ptr);
}

// float64 into float32 actions (dim per environment) for environments [begin, end), rounded
// as NumPy casts; a finite value beyond float32's range is named (NaN and inf go on to the
// step's own check, which names them as it does for float32).
template <class Task>
void convert_continuous(const Task& task, const double* src, float* dst, int dim, int64_t begin,
                        int64_t end, int64_t offset, FirstProblem& bad_action) {
  uint32_t bad = 0;
  for (int64_t k = begin * dim; k < end * dim; ++k) {
    const double magnitude = std::fabs(src[k]);
    bad |= (magnitude > FLT_MAX) & (magnitude != HUGE_VAL);
    dst[k] = static_cast<float>(src[k]);
  }
  if (bad == 0) return;
  for (int64_t k = begin * dim; k < end * dim; ++k) {
    const double magnitude = std::fabs(src[k]);
    if (magnitude > FLT_MAX && magnitude != HUGE_VAL) {
      bad_action.offer(offset + k / dim, task.id() + ": action at index " +
                                             std::to_string(offset + k / dim) + " is " +
                                             float_repr(src[k]) + ", outside float32's range");
      dst[k] = NAN;  // refused by the step's check at the same index
      return;
    }
  }
}

}  // namespace detail

// Environments [begin, end) of `given` into the step's own copy `dst` (dim values each):
// copied where they are the task's type, else checked and converted (a value that does not
// convert is offered to `bad_action` with the Python door's message).
template <class Task>
void take_actions(const Task& task, const GivenActions& given,
                  typename Traits<Task>::Action* dst, int dim, int64_t begin, int64_t end,
                  int64_t offset, FirstProblem& bad_action) {
  using Action = typename Traits<Task>::Action;
  if (given.type == kNumpyType<Action>) {
    std::memcpy(dst + begin * dim, static_cast<const Action*>(given.data) + begin * dim,
                sizeof(Action) * dim * (end - begin));
    return;
  }
  if constexpr (Traits<Task>::kDiscrete) {
    auto convert = [&](auto zero) {
      using Src = decltype(zero);
      detail::convert_discrete(task, static_cast<const Src*>(given.data), dst, begin, end,
                               offset, bad_action);
    };
    switch (given.type) {
      case NPY_BYTE: return convert(static_cast<signed char>(0));
      case NPY_UBYTE: return convert(static_cast<unsigned char>(0));
      case NPY_SHORT: return convert(static_cast<short>(0));
      case NPY_USHORT: return convert(static_cast<unsigned short>(0));
      case NPY_INT: return convert(0);
      case NPY_UINT: return convert(0u);
      case NPY_LONG: return convert(0l);
      case NPY_ULONG: return convert(0ul);
      case NPY_LONGLONG: return convert(0ll);
      case NPY_ULONGLONG: return convert(0ull);
      default: return;  // given_actions admits no other type
    }
  } else {
    detail::convert_continuous(task, static_cast<const double*>(given.data), dst, dim, begin,
                               end, offset, bad_action);
  }
}

}  // namespace metagraph::engine
