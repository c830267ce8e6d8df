// .npy writer: magic, version 1.0, a padded header dict, then little-endian C-order data.
#include "verify/npy_writer.h"

#include <fmt/format.h>

#include <fstream>

#include "common/errors.h"

namespace mha {
namespace {

void write_raw(const std::string& path, const char* descr, const void* data, size_t bytes,
               const std::vector<size_t>& shape) {
  std::string dims;
  for (size_t d : shape) dims += fmt::format("{}, ", d);
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  const size_t prefix = 10;  // magic (6) + version (2) + header length (2)
  header.append(64 - (prefix + header.size() + 1) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw UsageError(fmt::format("{}: cannot write", path));
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.write(reinterpret_cast<const char*>(magic), 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.put(static_cast<char>(len & 0xff));
  out.put(static_cast<char>(len >> 8));
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

}  // namespace

void write_npy(const std::string& path, const std::vector<float>& data,
               const std::vector<size_t>& shape) {
  write_raw(path, "<f4", data.data(), data.size() * sizeof(float), shape);
}
void write_npy(const std::string& path, const std::vector<int>& data,
               const std::vector<size_t>& shape) {
  write_raw(path, "<i4", data.data(), data.size() * sizeof(int), shape);
}

}  // namespace mha
