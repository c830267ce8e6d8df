// The 64-bit FNV-1a hash as 16 hex digits: what reports record of a config file, and what names a
// long ragged list (scripts/peers/peerlib/suite.py computes the same).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace mha {

inline std::string fnv1a_hex(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace mha
