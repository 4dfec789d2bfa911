// The task handlers on a CUDA device: the buffers of a GPU program copied to host memory on the
// handler's stream, the CPU handler run on the copies (the engine's threads, as on the CPU),
// and the results copied back (what jax.pure_callback does on a GPU, without Python).
//
// No CUDA headers and no link against CUDA: the driver functions used here are looked up
// in libcuda.so.1 (the driver's library, loaded already in a process that runs a CUDA program)
// the first time a handler runs on a GPU. A machine without CUDA never reaches this code.
#pragma once
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "xla/ffi/api/ffi.h"

namespace metagraph::engine {

namespace ffi = xla::ffi;

// The CUDA driver API, as far as used here (cuda.h's declarations, CUDA 3.2 and later).
struct CudaDriver {
  using Result = int;  // CUresult; 0 is CUDA_SUCCESS
  using Stream = void*;
  using Context = void*;
  using DevicePtr = unsigned long long;  // CUdeviceptr
  Result (*copy_to_host)(void*, DevicePtr, size_t, Stream) = nullptr;        // cuMemcpyDtoHAsync_v2
  Result (*copy_to_device)(DevicePtr, const void*, size_t, Stream) = nullptr;  // cuMemcpyHtoDAsync_v2
  Result (*synchronize)(Stream) = nullptr;                                   // cuStreamSynchronize
  Result (*stream_context)(Stream, Context*) = nullptr;                      // cuStreamGetCtx
  Result (*push_context)(Context) = nullptr;                                 // cuCtxPushCurrent_v2
  Result (*pop_context)(Context*) = nullptr;                                 // cuCtxPopCurrent_v2
  Result (*error_name)(Result, const char**) = nullptr;                      // cuGetErrorName
  std::string missing;  // why the driver could not be used, or empty

  static const CudaDriver& get() {
    static const CudaDriver driver = load();
    return driver;
  }

  std::string describe(Result r) const {
    const char* name = nullptr;
    if (error_name == nullptr || error_name(r, &name) != 0 || name == nullptr)
      return "CUDA error " + std::to_string(r);
    return name;
  }

 private:
  template <class F>
  static void find(void* library, const char* symbol, F& f, std::string& missing) {
    f = reinterpret_cast<F>(dlsym(library, symbol));
    if (f == nullptr && missing.empty()) missing = std::string("libcuda.so.1 has no ") + symbol;
  }

  static CudaDriver load() {
    CudaDriver d;
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      d.missing = "cannot open libcuda.so.1 (the CUDA driver)";
      return d;
    }
    find(library, "cuMemcpyDtoHAsync_v2", d.copy_to_host, d.missing);
    find(library, "cuMemcpyHtoDAsync_v2", d.copy_to_device, d.missing);
    find(library, "cuStreamSynchronize", d.synchronize, d.missing);
    find(library, "cuStreamGetCtx", d.stream_context, d.missing);
    find(library, "cuCtxPushCurrent_v2", d.push_context, d.missing);
    find(library, "cuCtxPopCurrent_v2", d.pop_context, d.missing);
    find(library, "cuGetErrorName", d.error_name, d.missing);
    return d;
  }
};

// Host copies of one handler call's device buffers. `in` copies an argument to the host,
// `out` gives a result's host buffer (the argument's own copy where XLA aliased the result to
// it, as the step's state), `finish` copies the results back and waits for the copies. Every
// host buffer is 8-byte aligned (the engine's state words). A failed CUDA call is reported by
// `error()`: the handler returns it instead of running.
class HostStaging {
 public:
  explicit HostStaging(void* stream) : driver_(CudaDriver::get()), stream_(stream) {
    if (!driver_.missing.empty()) {
      fail("the GPU handlers need the CUDA driver: " + driver_.missing);
      return;
    }
    check(driver_.stream_context(stream_, &context_), "cuStreamGetCtx");
    if (ok()) pushed_ = check(driver_.push_context(context_), "cuCtxPushCurrent");
  }

  ~HostStaging() {
    if (pushed_) {
      void* popped = nullptr;
      driver_.pop_context(&popped);
    }
  }

  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  bool ok() const { return error_.empty(); }

  // The argument's host copy (its bytes copied from the device once `wait_inputs` returns).
  template <ffi::DataType dtype>
  ffi::Buffer<dtype> in(const ffi::Buffer<dtype>& device) {
    XLA_FFI_Buffer* host = stage(dtype, device.untyped_data(), device.dimensions(),
                                 device.element_count() * ffi::ByteWidth(dtype), nullptr);
    if (ok() && bytes_.back() > 0)
      check(driver_.copy_to_host(host->data, address(device.untyped_data()), bytes_.back(),
                                 stream_), "cuMemcpyDtoHAsync");
    return ffi::Buffer<dtype>(host);
  }

  // The result's host buffer, copied to the device by `finish`.
  template <ffi::DataType dtype>
  ffi::Result<ffi::Buffer<dtype>> out(ffi::Result<ffi::Buffer<dtype>> device) {
    const void* data = device->untyped_data();
    void* alias = nullptr;
    for (size_t i = 0; i < device_.size(); ++i)
      if (device_[i] == data && data != nullptr) alias = buffers_[i].data;
    XLA_FFI_Buffer* host = stage(dtype, data, device->dimensions(),
                                 device->element_count() * ffi::ByteWidth(dtype), alias);
    results_.push_back(buffers_.size() - 1);
    return ffi::Result<ffi::Buffer<dtype>>(ffi::Buffer<dtype>(host));
  }

  // Waits for the arguments' copies: call after the last `in` and before running on the host.
  bool wait_inputs() {
    if (ok()) check(driver_.synchronize(stream_), "cuStreamSynchronize");
    return ok();
  }

  // The host handler's error, or the results copied to the device and waited for.
  ffi::Error finish(ffi::Error host_result) {
    if (host_result.failure()) return host_result;
    for (size_t i : results_) {
      if (!ok()) break;
      if (bytes_[i] > 0)
        check(driver_.copy_to_device(address(device_[i]), buffers_[i].data, bytes_[i], stream_),
              "cuMemcpyHtoDAsync");
    }
    // The host buffers die with this object: the copies must be done first.
    if (ok()) check(driver_.synchronize(stream_), "cuStreamSynchronize");
    return error();
  }

  ffi::Error error() const {
    return ok() ? ffi::Error::Success() : ffi::Error::Internal(error_);
  }

 private:
  static CudaDriver::DevicePtr address(const void* p) {
    return static_cast<CudaDriver::DevicePtr>(reinterpret_cast<uintptr_t>(p));
  }

  bool check(CudaDriver::Result r, const char* what) {
    if (r != 0) fail(std::string(what) + " failed: " + driver_.describe(r));
    return r == 0;
  }

  void fail(std::string message) {
    if (error_.empty()) error_ = "metagraph GPU handler: " + std::move(message);
  }

  XLA_FFI_Buffer* stage(ffi::DataType dtype, const void* device, ffi::Span<const int64_t> dims,
                        size_t bytes, void* alias) {
    void* data = alias;
    if (data == nullptr && bytes > 0) {
      storage_.emplace_back(new uint64_t[(bytes + 7) / 8]);
      data = storage_.back().get();
    }
    dims_.emplace_back(dims.begin(), dims.end());
    buffers_.push_back(XLA_FFI_Buffer{XLA_FFI_Buffer_STRUCT_SIZE, nullptr,
                                      static_cast<XLA_FFI_DataType>(dtype), data,
                                      static_cast<int64_t>(dims_.back().size()),
                                      dims_.back().data()});
    device_.push_back(device);
    bytes_.push_back(bytes);
    return &buffers_.back();
  }

  const CudaDriver& driver_;
  void* stream_;
  void* context_ = nullptr;
  bool pushed_ = false;
  std::string error_;
  std::deque<XLA_FFI_Buffer> buffers_;       // stable addresses: ffi::Buffer points at them
  std::deque<std::vector<int64_t>> dims_;
  std::vector<const void*> device_;
  std::vector<size_t> bytes_;
  std::vector<size_t> results_;
  std::vector<std::unique_ptr<uint64_t[]>> storage_;
};

}  // namespace metagraph::engine
