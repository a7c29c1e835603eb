/*@cuset
launches:
  - kernel: noop
    grid: [1]
    block: [32]
    args: [x, out]
*/
// @expect: wrong_answer
// Writes nothing: the output keeps whatever the harness put there.
extern "C" __global__ void noop(const float* x, float* y) {}
