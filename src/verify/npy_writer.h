// Minimal .npy (format 1.0) writer for float32 and int32 arrays, so dumps load in numpy.
#pragma once

#include <string>
#include <vector>

namespace mha {

void write_npy(const std::string& path, const std::vector<float>& data,
               const std::vector<size_t>& shape);
void write_npy(const std::string& path, const std::vector<int>& data,
               const std::vector<size_t>& shape);

}  // namespace mha
