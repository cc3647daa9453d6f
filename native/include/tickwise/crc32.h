// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, init and final xor
// 0xFFFFFFFF): the checksum zlib's crc32() and Node's zlib.crc32() compute.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tickwise {

namespace detail {
struct Crc32Table {
  uint32_t v[8][256];
  constexpr Crc32Table() : v{} {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      v[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int t = 1; t < 8; ++t) v[t][i] = (v[t - 1][i] >> 8) ^ v[0][v[t - 1][i] & 0xFF];
  }
};
inline constexpr Crc32Table kCrc32Table{};
}  // namespace detail

/// Continue a CRC-32 over `len` bytes; start with crc = 0.
inline uint32_t crc32_update(uint32_t crc, const void* data, size_t len) {
  const auto* p = static_cast<const unsigned char*>(data);
  const auto& t = detail::kCrc32Table.v;
  crc = ~crc;
  while (len >= 8) {  // slicing-by-8
    uint32_t a = crc ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    crc = t[7][a & 0xFF] ^ t[6][(a >> 8) & 0xFF] ^ t[5][(a >> 16) & 0xFF] ^ t[4][a >> 24] ^ t[3][p[4]] ^
          t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    len -= 8;
  }
  while (len--) crc = t[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

inline uint32_t crc32(const void* data, size_t len) { return crc32_update(0, data, len); }

}  // namespace tickwise
