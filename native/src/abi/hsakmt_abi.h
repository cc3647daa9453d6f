// Hand-written declarations of the ROCt thunk (libhsakmt) clock-counter query,
// the source of (host, device tick) correlation triples on ROCm.
#pragma once

#include <cstdint>

extern "C" {

// mirrors: typedef struct _HsaClockCounters { HSAuint64 GPUClockCounter;
//   HSAuint64 CPUClockCounter; HSAuint64 SystemClockCounter;
//   HSAuint64 SystemClockFrequencyHz; } HsaClockCounters;   (hsakmttypes.h)
struct HsaClockCounters {
  uint64_t GPUClockCounter;
  uint64_t CPUClockCounter;
  uint64_t SystemClockCounter;
  uint64_t SystemClockFrequencyHz;
};

// mirrors: HSAKMT_STATUS HSAKMTAPI hsaKmtGetClockCounters(HSAuint32 NodeId, HsaClockCounters* Counters);
// HSAKMT_STATUS is an enum; 0 is HSAKMT_STATUS_SUCCESS.
typedef int (*HsaKmtGetClockCountersFn)(uint32_t NodeId, HsaClockCounters* Counters);

}  // extern "C"
