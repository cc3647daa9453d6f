// tw-dump: summarise and validate a recorder capture directory.
//   tw-dump DIR            human summary; exit 1 when validation fails
//   tw-dump DIR --records  also print every record, one line each
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>

#include "reader.h"

using namespace tickwise;

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: tw-dump DIR [--records]\n");
    return 2;
  }
  const bool all = argc > 2 && strcmp(argv[2], "--records") == 0;
  reader::Capture c;
  std::string err;
  if (!reader::read_capture(argv[1], c, err)) {
    fprintf(stderr, "tw-dump: %s: %s\n", argv[1], err.c_str());
    return 2;
  }
  std::map<uint16_t, uint64_t> by_kind;
  for (const auto& r : c.records) ++by_kind[r.prefix.kind];
  printf("capture %s: pid %u%s, %zu records in %" PRIu64 " chunks, %" PRIu64 "/%" PRIu64 " bytes valid%s\n",
         argv[1], c.header.pid, c.header.flags & 1 ? " (forked child)" : "", c.records.size(), c.chunks_ok,
         c.valid_bytes, c.file_bytes, c.truncated ? (" [stopped: " + c.stop_reason + "]").c_str() : "");
  for (const auto& [k, n] : by_kind) printf("  %-28s %" PRIu64 "\n", reader::kind_name(k) ? reader::kind_name(k) : "?", n);
  printf("  names: %zu\n", c.names.size());
  if (all)
    for (const auto& r : c.records) {
      const uint64_t* w = reinterpret_cast<const uint64_t*>(r.bytes);
      printf("%s tid=%u aux=%u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
             reader::kind_name(r.prefix.kind) ? reader::kind_name(r.prefix.kind) : "?", r.prefix.tid, r.prefix.aux,
             w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
    }
  auto errs = reader::validate(c);
  for (const auto& e : errs) printf("invalid: %s\n", e.c_str());
  return errs.empty() ? 0 : 1;
}
