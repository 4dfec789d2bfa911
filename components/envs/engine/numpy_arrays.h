// NumPy arrays for the host pools (classic control and MuJoCo), through NumPy's C API.
// The including translation unit calls _import_array() once when its module loads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

namespace metagraph::engine {

namespace nb = nanobind;

// NumPy arrays through NumPy's C API: a fresh array costs about a tenth of a microsecond this
// way, several times less than nanobind's buffer-protocol round trip, which dominated a step of
// one environment.
template <class T>
constexpr int kNumpyType = std::is_same_v<T, float>      ? NPY_FLOAT32
                           : std::is_same_v<T, double>   ? NPY_FLOAT64
                           : std::is_same_v<T, int32_t>  ? NPY_INT32
                           : std::is_same_v<T, uint64_t> ? NPY_UINT64
                                                         : NPY_BOOL;

template <class T>
constexpr const char* kNumpyName = std::is_same_v<T, float>      ? "float32"
                                   : std::is_same_v<T, double>   ? "float64"
                                   : std::is_same_v<T, int32_t>  ? "int32"
                                   : std::is_same_v<T, uint64_t> ? "uint64"
                                                                 : "bool";

// A fresh NumPy array of T, left for the C++ code to fill; and where its data is.
template <class T>
std::pair<nb::object, T*> new_array(const npy_intp* shape, int ndim) {
  PyObject* array = PyArray_SimpleNew(ndim, const_cast<npy_intp*>(shape), kNumpyType<T>);
  if (array == nullptr) throw nb::python_error();
  return {nb::steal(array), static_cast<T*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(array)))};
}
template <class T>
std::pair<nb::object, T*> new_array(std::initializer_list<npy_intp> shape) {
  return new_array<T>(shape.begin(), static_cast<int>(shape.size()));
}
template <class T>
std::pair<nb::object, T*> new_array(const std::vector<npy_intp>& shape) {
  return new_array<T>(shape.data(), static_cast<int>(shape.size()));
}

// The data of `obj` if it is an aligned, C-contiguous, native-order NumPy array of `count`
// items of NumPy type `type` (named `name`, aligned to `alignment` bytes); else an error naming
// the first requirement it misses.
inline const void* checked_data(nb::handle obj, size_t count, const char* env_id,
                                const char* what, int type, const char* name,
                                size_t alignment) {
  auto* array = reinterpret_cast<PyArrayObject*>(obj.ptr());
  const std::string prefix = std::string(env_id) + ": " + what + " must be ";
  if (!PyArray_Check(obj.ptr()) || PyArray_TYPE(array) != type ||
      !PyArray_IS_C_CONTIGUOUS(array))
    throw nb::type_error((prefix + "a C-contiguous NumPy array of " + name).c_str());
  if (!PyArray_ISALIGNED(array))
    throw nb::type_error((prefix + "aligned to " + std::to_string(alignment) + " bytes (" +
                          name + "); this array's data is not: copy it with " +
                          "np.require(a, requirements='CA')").c_str());
  if (!PyArray_ISNOTSWAPPED(array))
    throw nb::type_error((prefix + "in the machine's byte order, got a byte-swapped " +
                          name).c_str());
  if (static_cast<size_t>(PyArray_SIZE(array)) != count)
    throw std::invalid_argument(std::string(env_id) + ": expected " + std::to_string(count) +
                                " " + what + ", got " + std::to_string(PyArray_SIZE(array)));
  return PyArray_DATA(array);
}

// The data of `obj` if it is an aligned, C-contiguous, native-order NumPy array of `count` T;
// else an error naming the first requirement it misses.
template <class T>
const T* array_data(nb::handle obj, size_t count, const char* env_id, const char* what) {
  return static_cast<const T*>(
      checked_data(obj, count, env_id, what, kNumpyType<T>, kNumpyName<T>, alignof(T)));
}

}  // namespace metagraph::engine
