// A reader and validator of recorder capture directories (used by the tests
// and by tw-dump; the TypeScript reader in packages/capture is the product's).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tickwise/format.h"

namespace tickwise::reader {

struct Capture {
  std::string dir;
  fmt::FileHeader header{};
  bool header_ok = false;
  std::vector<fmt::Record> records;
  std::map<std::pair<uint32_t, uint64_t>, std::string> names;  // (StringKeyKind, key) -> name
  uint64_t chunks_ok = 0;
  uint64_t file_bytes = 0, valid_bytes = 0;
  bool truncated = false;    // the file ends inside a chunk or with a bad chunk
  std::string stop_reason;   // why reading stopped before the end ("" when it did not)
  std::string meta_json;     // raw text of meta.json ("" when absent)
};

/// Reads dir/records.twr (up to the last complete, CRC-valid chunk) and dir/meta.json.
bool read_capture(const std::string& dir, Capture& out, std::string& error);

/// Consistency checks: known kinds, enter <= exit, unique launch ids, ...
std::vector<std::string> validate(const Capture& c);

const char* kind_name(uint16_t kind);

}  // namespace tickwise::reader
