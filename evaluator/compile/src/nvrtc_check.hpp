#pragma once
// One checking macro for the NVRTC API family: throws cuset::Error with the call, its location and
// NVRTC's own message.
#include <nvrtc.h>

#include "cuset/common/error.hpp"

#define CUSET_NVRTC_CHECK(call)                                                                                                           \
  do {                                                                                                                                    \
    const nvrtcResult cuset_nvrtc_status_ = (call);                                                                                       \
    if (cuset_nvrtc_status_ != NVRTC_SUCCESS) {                                                                                           \
      throw ::cuset::makeError("NVRTC call {} failed at {}:{}: {}", #call, __FILE__, __LINE__, nvrtcGetErrorString(cuset_nvrtc_status_)); \
    }                                                                                                                                     \
  } while (0)
