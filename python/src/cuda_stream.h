// The current CUDA stream of a device, read without c10_cuda: through c10's device-generic guard,
// whose CUDA implementation libc10_cuda registers when a CUDA torch is loaded. So the extension
// links only torch's CPU libraries and builds against a CPU-only wheel too (where no CUDA tensor
// can reach these calls).
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <cuda_runtime.h>

namespace mha_py {

// The stream torch launches on for `device` (torch.cuda.current_stream(device)): the capturing
// stream inside torch.cuda.graph, the one a `with torch.cuda.stream(s)` block set.
inline cudaStream_t current_cuda_stream(c10::Device device) {
  const c10::impl::VirtualGuardImpl impl(c10::DeviceType::CUDA);
  const c10::Stream stream = impl.getStream(device);
  return static_cast<cudaStream_t>(stream.native_handle());
}

}  // namespace mha_py
