// The XLA FFI handlers of every task on a CUDA device: each runs the CPU handler (ffi.h) on
// host copies of its buffers (host_staging.h), so that a program placed on a GPU can step a
// native task inside it, the network's layers staying on the GPU. Same arguments, results,
// attributes and errors as the CPU handlers, with the GPU stream in front.
#pragma once
#include <tuple>

#include "ffi.h"
#include "host_staging.h"

namespace metagraph::engine {

inline auto gpu_base() { return ffi::Ffi::Bind().Ctx<ffi::PlatformStream<void*>>(); }

// What a CPU handler's parameter becomes on the host: an argument buffer its host copy, a
// result buffer its host buffer (copied back by `finish`), an attribute itself.
template <ffi::DataType dtype>
ffi::Buffer<dtype> on_host(HostStaging& host, const ffi::Buffer<dtype>& argument) {
  return host.in(argument);
}

template <ffi::DataType dtype>
ffi::Result<ffi::Buffer<dtype>> on_host(HostStaging& host,
                                        ffi::Result<ffi::Buffer<dtype>> result) {
  return host.out(result);
}

template <class Attribute>
Attribute on_host(HostStaging&, Attribute attribute) {
  return attribute;
}

// `OnHost<&cpu_handler>::run(stream, ...)`: the GPU handler of a CPU handler, with the same
// parameters behind the stream. Arguments are staged before results (the CPU handlers take
// them first), so a result XLA aliased to an argument finds that argument's host copy.
template <auto Cpu>
struct OnHost;

template <class... Params, ffi::Error (*Cpu)(Params...)>
struct OnHost<Cpu> {
  static ffi::Error run(void* stream, Params... params) {
    HostStaging host(stream);
    // a braced list is evaluated left to right: arguments, then results, then attributes
    std::tuple<Params...> staged{on_host(host, params)...};
    if (!host.wait_inputs()) return host.error();
    return host.finish(std::apply(Cpu, staged));
  }
};

}  // namespace metagraph::engine
