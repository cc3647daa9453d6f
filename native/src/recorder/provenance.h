// Provenance of the loaded code: every object dl_iterate_phdr reports, with
// path, size, mtime, ELF build-id (read from the mapped PT_NOTE) and counts of
// marker strings in the file (TICKWISE_MARKERS).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tickwise::rec {

class JsonWriter;

struct ProvenanceEntry {
  std::string path;
  uint64_t load_base = 0;
  std::string build_id;  // lowercase hex, "" when the object has none
  bool stat_ok = false;
  uint64_t size_bytes = 0;
  int64_t mtime_ns = 0;
  std::vector<uint64_t> marker_counts;  // one per marker; empty when not computed
  bool loaded = true;                   // false: was loaded earlier, gone at the last scan
};

struct ProvenanceCache {
  std::vector<ProvenanceEntry> entries;
  std::unordered_map<std::string, std::vector<uint64_t>> marker_counts_by_file;  // key: path|size|mtime
};

/// dlpi_adds / dlpi_subs of the loader: they change when objects are (un)loaded.
void provenance_counters(unsigned long long* adds, unsigned long long* subs);
/// Rescan the loaded objects into `cache` (keeps objects seen before).
void provenance_scan(ProvenanceCache& cache, const std::vector<std::string>& markers);
void write_provenance_json(JsonWriter& w, const ProvenanceCache& cache, const std::vector<std::string>& markers);
/// Path of the recorder library itself.
std::string provenance_self_path();

}  // namespace tickwise::rec
