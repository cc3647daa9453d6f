#include "reader.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "tickwise/crc32.h"

namespace tickwise::reader {

const char* kind_name(uint16_t k) {
  switch (fmt::Kind(k)) {
    case fmt::Kind::kHipLaunch: return "hip_launch";
    case fmt::Kind::kHipSync: return "hip_sync";
    case fmt::Kind::kHipDispatch: return "hip_dispatch";
    case fmt::Kind::kXdnaDevice: return "xdna_device";
    case fmt::Kind::kXdnaHwctxCreate: return "xdna_hwctx_create";
    case fmt::Kind::kXdnaHwctxDestroy: return "xdna_hwctx_destroy";
    case fmt::Kind::kXdnaExecCmd: return "xdna_exec_cmd";
    case fmt::Kind::kXdnaSyncobjTimelineWait: return "xdna_syncobj_timeline_wait";
    case fmt::Kind::kXdnaWaitCmd: return "xdna_wait_cmd";
    case fmt::Kind::kXdnaSyncBo: return "xdna_sync_bo";
    case fmt::Kind::kXdnaUnknownIoctl: return "xdna_unknown_ioctl";
    case fmt::Kind::kXdnaSyncobjWait: return "xdna_syncobj_wait";
    case fmt::Kind::kClockSample: return "clock_sample";
    case fmt::Kind::kThreadStats: return "thread_stats";
    case fmt::Kind::kCudaKernel: return "cuda_kernel";
    case fmt::Kind::kCudaMemcpy: return "cuda_memcpy";
    case fmt::Kind::kCudaMemset: return "cuda_memset";
    case fmt::Kind::kCudaApi: return "cuda_api";
    case fmt::Kind::kCudaName: return "cuda_name";
  }
  return nullptr;
}

static bool slurp(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream s;
  s << f.rdbuf();
  out = s.str();
  return true;
}

bool read_capture(const std::string& dir, Capture& c, std::string& error) {
  c = Capture{};
  c.dir = dir;
  slurp(dir + "/meta.json", c.meta_json);
  std::string data;
  if (!slurp(dir + "/records.twr", data)) {
    error = "cannot read " + dir + "/records.twr";
    return false;
  }
  c.file_bytes = data.size();
  if (data.size() < sizeof(fmt::FileHeader)) {
    error = "records.twr shorter than its header";
    return false;
  }
  memcpy(&c.header, data.data(), sizeof c.header);
  if (memcmp(c.header.magic, fmt::kFileMagic, 8) != 0) {
    error = "bad file magic";
    return false;
  }
  if (crc32(&c.header, offsetof(fmt::FileHeader, header_crc32)) != c.header.header_crc32) {
    error = "file header CRC mismatch";
    return false;
  }
  if (c.header.record_size != fmt::kRecordSize || c.header.header_size != sizeof(fmt::FileHeader)) {
    error = "unsupported record or header size";
    return false;
  }
  c.header_ok = true;
  size_t off = sizeof(fmt::FileHeader);
  c.valid_bytes = off;
  uint64_t expect_seq = 0;
  while (off < data.size()) {
    if (data.size() - off < sizeof(fmt::ChunkHeader)) {
      c.truncated = true;
      c.stop_reason = "partial chunk header at byte " + std::to_string(off);
      break;
    }
    fmt::ChunkHeader h;
    memcpy(&h, data.data() + off, sizeof h);
    if (h.magic != fmt::kChunkMagic || crc32(&h, offsetof(fmt::ChunkHeader, header_crc32)) != h.header_crc32) {
      c.truncated = true;
      c.stop_reason = "bad chunk header at byte " + std::to_string(off);
      break;
    }
    if (data.size() - off - sizeof h < h.payload_bytes) {
      c.truncated = true;
      c.stop_reason = "partial chunk payload at byte " + std::to_string(off);
      break;
    }
    const char* payload = data.data() + off + sizeof h;
    if (crc32(payload, h.payload_bytes) != h.payload_crc32) {
      c.truncated = true;
      c.stop_reason = "chunk payload CRC mismatch at byte " + std::to_string(off);
      break;
    }
    if (h.seq != expect_seq) {
      c.truncated = true;
      c.stop_reason = "chunk sequence gap at byte " + std::to_string(off);
      break;
    }
    ++expect_seq;
    if (h.type == uint16_t(fmt::ChunkType::kRecords)) {
      if (h.payload_bytes != uint64_t(h.item_count) * fmt::kRecordSize) {
        c.truncated = true;
        c.stop_reason = "record chunk size mismatch at byte " + std::to_string(off);
        break;
      }
      const size_t n0 = c.records.size();
      c.records.resize(n0 + h.item_count);
      memcpy(c.records.data() + n0, payload, h.payload_bytes);
    } else if (h.type == uint16_t(fmt::ChunkType::kStrings)) {
      size_t p = 0;
      for (uint32_t i = 0; i < h.item_count && p + sizeof(fmt::StringEntry) <= h.payload_bytes; ++i) {
        fmt::StringEntry e;
        memcpy(&e, payload + p, sizeof e);
        p += sizeof e;
        if (p + e.byte_len > h.payload_bytes) break;
        c.names[{e.key_kind, e.key}] = std::string(payload + p, e.byte_len);
        p += (e.byte_len + 7) / 8 * 8;
      }
    }  // other chunk types: skipped (forward compatible)
    off += sizeof h + h.payload_bytes;
    c.valid_bytes = off;
    ++c.chunks_ok;
  }
  return true;
}

std::vector<std::string> validate(const Capture& c) {
  std::vector<std::string> errs;
  auto err = [&](size_t i, const std::string& m) {
    if (errs.size() < 50) errs.push_back("record " + std::to_string(i) + ": " + m);
  };
  std::set<uint64_t> launch_ids;
  for (size_t i = 0; i < c.records.size(); ++i) {
    const fmt::Record& r = c.records[i];
    const uint16_t k = r.prefix.kind;
    if (!kind_name(k)) {
      err(i, "unknown kind " + std::to_string(k));
      continue;
    }
    switch (fmt::Kind(k)) {
      case fmt::Kind::kHipLaunch:
        if (r.hip_launch.host_exit_ns < r.hip_launch.host_enter_ns) err(i, "launch exit before enter");
        if (!launch_ids.insert(r.hip_launch.launch_id).second) err(i, "duplicate launch_id");
        break;
      case fmt::Kind::kHipSync:
        if (r.hip_sync.host_exit_ns < r.hip_sync.host_enter_ns) err(i, "sync exit before enter");
        break;
      case fmt::Kind::kHipDispatch:
        if (r.hip_dispatch.end < r.hip_dispatch.start) err(i, "dispatch end before start");
        break;
      case fmt::Kind::kClockSample:
        if (r.clock.host_after_ns < r.clock.host_before_ns) err(i, "clock sample after < before");
        break;
      case fmt::Kind::kThreadStats:
        break;
      case fmt::Kind::kCudaKernel:
      case fmt::Kind::kCudaMemcpy:
      case fmt::Kind::kCudaMemset:  // same start/end offsets
        if (r.cuda_kernel.end < r.cuda_kernel.start) err(i, "cuda activity end before start");
        break;
      case fmt::Kind::kCudaApi:
        if (r.cuda_api.host_exit_ns < r.cuda_api.host_enter_ns) err(i, "cuda api exit before enter");
        break;
      case fmt::Kind::kCudaName:
        if (r.cuda_name.offset >= r.cuda_name.total_len && r.cuda_name.total_len != 0) err(i, "cuda name fragment past its end");
        break;
      default:  // amdxdna kinds share the prefix
        if (r.xdna.host_exit_ns < r.xdna.host_enter_ns) err(i, "xdna exit before enter");
        break;
    }
  }
  return errs;
}

}  // namespace tickwise::reader
