// The native module of metagraph. Until the environment cores land it carries one XLA FFI
// handler (an affine map, used to prove the FFI path end to end: build against jaxlib's
// headers, register from Python, call inside jax.jit) and the build facts.
#include <cstdint>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "xla/ffi/api/ffi.h"

namespace nb = nanobind;
namespace ffi = xla::ffi;

namespace {

// y = scale * x + shift, elementwise over a float32 buffer of any shape.
ffi::Error AffineImpl(float scale, float shift, ffi::Buffer<ffi::F32> x,
                      ffi::ResultBuffer<ffi::F32> y) {
  const size_t n = x.element_count();
  if (y->element_count() != n) {
    return ffi::Error::InvalidArgument("affine: output and input sizes differ");
  }
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (size_t i = 0; i < n; ++i) out[i] = scale * in[i] + shift;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(Affine, AffineImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("scale")
                                  .Attr<float>("shift")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

template <typename T>
nb::capsule EncapsulateFfiHandler(T* fn) {
  return nb::capsule(reinterpret_cast<void*>(fn));
}

}  // namespace

NB_MODULE(_native, m) {
  m.doc() = "metagraph native code (C++17, nanobind, XLA FFI)";
  m.def("build_info", []() {
    nb::dict info;
    info["compiler"] = std::string(__VERSION__);
    info["cplusplus"] = static_cast<long>(__cplusplus);
    info["ffi_api_major"] = XLA_FFI_API_MAJOR;
    info["ffi_api_minor"] = XLA_FFI_API_MINOR;
    return info;
  });
  m.def("ffi_handlers", []() {
    nb::dict handlers;
    handlers["metagraph_affine"] = EncapsulateFfiHandler(Affine);
    return handlers;
  });
}
