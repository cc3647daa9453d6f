// Single-producer single-consumer ring of fixed-size records. The producer is
// one application thread, the consumer the recorder's drain thread. push()
// never blocks: when the ring is full the record is counted as dropped.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "tickwise/format.h"

namespace tickwise::rec {

struct Ring {
  // producer side
  alignas(64) std::atomic<uint64_t> head{0};  // records ever pushed
  uint64_t cached_tail = 0;
  std::atomic<uint64_t> dropped{0};
  // consumer side
  alignas(64) std::atomic<uint64_t> tail{0};
  uint64_t reported_pushed = 0, reported_dropped = 0;  // what the last ThreadStats said
  uint64_t retired_at_ns = 0;
  // fixed
  alignas(64) uint32_t tid = 0;
  uint32_t slot = 0;  // registration index, 1-based
  uint64_t capacity = 0, mask = 0;
  std::atomic<bool> retired{false};
  fmt::Record* slots = nullptr;

  static Ring* create(uint32_t records_pow2, uint32_t tid, uint32_t slot) {
    void* mem = nullptr;
    if (posix_memalign(&mem, 64, sizeof(Ring)) != 0) return nullptr;
    Ring* r = new (mem) Ring();
    void* s = nullptr;
    if (posix_memalign(&s, 64, size_t(records_pow2) * sizeof(fmt::Record)) != 0) {
      r->~Ring();
      free(mem);
      return nullptr;
    }
    r->slots = static_cast<fmt::Record*>(s);
    // Touch every page now, not on the application's launch path.
    std::memset(s, 0, size_t(records_pow2) * sizeof(fmt::Record));
    r->capacity = records_pow2;
    r->mask = records_pow2 - 1;
    r->tid = tid;
    r->slot = slot;
    return r;
  }
  static void destroy(Ring* r) {
    free(r->slots);
    r->~Ring();
    free(r);
  }

  /// Producer: a slot to fill in place, or nullptr when the ring is full
  /// (counted as a drop). Publish it with commit().
  fmt::Record* reserve() {
    const uint64_t h = head.load(std::memory_order_relaxed);
    if (h - cached_tail >= capacity) {
      cached_tail = tail.load(std::memory_order_acquire);
      if (h - cached_tail >= capacity) {
        dropped.store(dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        return nullptr;
      }
    }
    // A slot a few ahead: fetch it for writing while the caller works (the
    // drain thread's reads left it in another core's cache).
    __builtin_prefetch(&slots[(h + 4) & mask], 1, 3);
    return &slots[h & mask];
  }
  void commit() { head.store(head.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

  bool push(const fmt::Record& rec) {
    const uint64_t h = head.load(std::memory_order_relaxed);
    if (h - cached_tail >= capacity) {
      cached_tail = tail.load(std::memory_order_acquire);
      if (h - cached_tail >= capacity) {
        dropped.store(dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        return false;
      }
    }
    std::memcpy(&slots[h & mask], &rec, sizeof rec);
    head.store(h + 1, std::memory_order_release);
    return true;
  }

  /// Consumer: copy out everything published so far; returns the count.
  template <typename Sink>
  size_t drain(Sink&& sink) {
    const uint64_t t = tail.load(std::memory_order_relaxed);
    const uint64_t h = head.load(std::memory_order_acquire);
    for (uint64_t i = t; i < h; ++i) sink(slots[i & mask]);
    tail.store(h, std::memory_order_release);
    return size_t(h - t);
  }
};

}  // namespace tickwise::rec
