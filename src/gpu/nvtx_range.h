// An NVTX range over a scope (profilers show each sweep point as one range): pushed when made,
// popped when the scope ends, also through an exception.
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <string>

namespace mha {

class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace mha
