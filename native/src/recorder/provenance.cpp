#include "recorder/provenance.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "recorder/json.h"

namespace tickwise::rec {
namespace {

struct Seen {
  std::string path;
  uint64_t base;
  std::string build_id;
};

std::string hex(const unsigned char* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) s += d[p[i] >> 4], s += d[p[i] & 15];
  return s;
}

std::string build_id_of(const struct dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    const size_t align = ph.p_align == 8 ? 8 : 4;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const unsigned char* name = p + sizeof(ElfW(Nhdr));
      const unsigned char* desc = name + ((n->n_namesz + align - 1) & ~(align - 1));
      const unsigned char* next = desc + ((n->n_descsz + align - 1) & ~(align - 1));
      if (next > end) break;
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0)
        return hex(desc, n->n_descsz);
      p = next;
    }
  }
  return "";
}

int collect(struct dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::vector<Seen>*>(data);
  std::string path = info->dlpi_name ? info->dlpi_name : "";
  if (path.empty()) {
    if (!out->empty()) return 0;  // only the first object (the executable) is nameless here
    char b[4096];
    ssize_t n = readlink("/proc/self/exe", b, sizeof b - 1);
    path = n > 0 ? std::string(b, size_t(n)) : "[exe]";
  }
  out->push_back({path, uint64_t(info->dlpi_addr), build_id_of(info)});
  return 0;
}

struct Counters {
  unsigned long long adds = 0, subs = 0;
};

int counters_cb(struct dl_phdr_info* info, size_t size, void* data) {
  auto* c = static_cast<Counters*>(data);
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
    c->adds = info->dlpi_adds;
    c->subs = info->dlpi_subs;
  }
  return 1;  // the first object is enough
}

std::vector<uint64_t> count_markers(const std::string& path, uint64_t size, const std::vector<std::string>& markers) {
  std::vector<uint64_t> counts(markers.size(), 0);
  if (size == 0) return counts;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return counts;
  void* m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return counts;
  const char* base = static_cast<const char*>(m);
  for (size_t i = 0; i < markers.size(); ++i) {
    const std::string& k = markers[i];
    if (k.empty()) continue;
    const char* p = base;
    const char* end = base + size;
    while (p < end) {
      const void* hit = memmem(p, size_t(end - p), k.data(), k.size());
      if (!hit) break;
      ++counts[i];
      p = static_cast<const char*>(hit) + k.size();
    }
  }
  munmap(m, size);
  return counts;
}

}  // namespace

void provenance_counters(unsigned long long* adds, unsigned long long* subs) {
  Counters c;
  dl_iterate_phdr(counters_cb, &c);
  *adds = c.adds;
  *subs = c.subs;
}

void provenance_scan(ProvenanceCache& cache, const std::vector<std::string>& markers) {
  std::vector<Seen> seen;
  dl_iterate_phdr(collect, &seen);
  for (auto& e : cache.entries) e.loaded = false;
  for (const auto& s : seen) {
    ProvenanceEntry* e = nullptr;
    for (auto& x : cache.entries)
      if (x.path == s.path && x.load_base == s.base) e = &x;
    if (!e) {
      cache.entries.push_back({});
      e = &cache.entries.back();
      e->path = s.path;
      e->load_base = s.base;
      e->build_id = s.build_id;
    }
    e->loaded = true;
    struct stat sb;
    e->stat_ok = stat(s.path.c_str(), &sb) == 0;
    if (e->stat_ok) {
      e->size_bytes = uint64_t(sb.st_size);
      e->mtime_ns = int64_t(sb.st_mtim.tv_sec) * 1000000000ll + sb.st_mtim.tv_nsec;
      if (!markers.empty() && S_ISREG(sb.st_mode)) {
        const std::string key = e->path + "|" + std::to_string(e->size_bytes) + "|" + std::to_string(e->mtime_ns);
        auto it = cache.marker_counts_by_file.find(key);
        if (it == cache.marker_counts_by_file.end())
          it = cache.marker_counts_by_file.emplace(key, count_markers(e->path, e->size_bytes, markers)).first;
        e->marker_counts = it->second;
      }
    }
  }
}

void write_provenance_json(JsonWriter& w, const ProvenanceCache& cache, const std::vector<std::string>& markers) {
  w.begin_array();
  for (const auto& e : cache.entries) {
    w.begin_object();
    w.key("path").value(e.path);
    w.key("load_base").value_u64_string(e.load_base);
    if (e.build_id.empty()) w.key("build_id").null();
    else w.key("build_id").value(e.build_id);
    w.key("file_found").value(e.stat_ok);
    if (e.stat_ok) {
      w.key("size_bytes").value(e.size_bytes);
      w.key("mtime_ns").value_i64_string(e.mtime_ns);
    }
    w.key("loaded_at_end").value(e.loaded);
    w.key("markers").begin_object();
    for (size_t i = 0; i < markers.size() && i < e.marker_counts.size(); ++i)
      w.key(markers[i].c_str()).value(e.marker_counts[i]);
    w.end_object();
    w.end_object();
  }
  w.end_array();
}

std::string provenance_self_path() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&provenance_self_path), &info) && info.dli_fname) return info.dli_fname;
  return "";
}

}  // namespace tickwise::rec
