// The process's memory as the OS sees it: its resident set, peak and now, the memory the
// node can still give, and handing freed heap memory back. Thread safety: every call may
// be made from any thread.
#pragma once

#include <cstdint>

namespace strata {

// The process's peak resident set (VmHWM), in bytes; 0 where /proc is unavailable.
int64_t PeakRssBytes();
// Its resident set now (VmRSS), in bytes; 0 where /proc is unavailable.
int64_t CurrentRssBytes();

// Memory this node can still give: MemAvailable, or the room left under the cgroup v2
// limit (a Slurm job's) when that is less; 0 where neither can be read.
int64_t AvailableMemoryBytes();

// Hands freed heap memory back to the OS. The pipeline's stage threads each allocate from
// their own malloc arena, and a pass's buffers freed there stay resident otherwise (on the
// Criteo-sized larger-than-memory bench, 85 MB of the peak RSS). The trainer calls it at
// each pass end.
void ReturnFreedMemory();

}  // namespace strata
