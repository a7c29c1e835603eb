#pragma once
// `cuset __nvrtc-worker`: compiles candidates with NVRTC for the supervisor, one request at a time, so
// that a compile that never ends (an 850-byte template bomb) or eats all memory costs a killed helper
// and a compile_error, not the whole evaluation. Requests and replies are sandbox::Message frames on
// stdin/stdout. Returns the exit status.
namespace cuset {

int runNvrtcWorker();

}  // namespace cuset
