// NameThisThread (strata/common/thread_name.h).
#include "strata/common/thread_name.h"

#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace strata {

void NameThisThread(const char* name) {
  const std::string kept(name, std::min<size_t>(std::strlen(name), 15));
  pthread_setname_np(pthread_self(), kept.c_str());
}

}  // namespace strata
