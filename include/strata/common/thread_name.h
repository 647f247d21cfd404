// NameThisThread: names the calling thread as `top -H`, `ps -L`, gdb and perf show it, so
// an operator can tell the pipeline's stages and the SSD-PS's compactor from the training
// threads. Thread safety: acts on the calling thread only.
#pragma once

namespace strata {

// Keeps at most 15 characters (the kernel's limit). Best effort: never fails.
void NameThisThread(const char* name);

}  // namespace strata
