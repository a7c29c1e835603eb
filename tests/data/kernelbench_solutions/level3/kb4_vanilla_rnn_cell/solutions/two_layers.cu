/*@cuset
launches:
  - kernel: input_to_hidden
    grid: [ceil_div(batch_size * hidden_size, 128)]
    block: [128]
    args: [x, hidden, i2h.weight, i2h.bias, h_next, batch_size, input_size, hidden_size]
  - kernel: hidden_to_output
    grid: [ceil_div(batch_size * output_size, 128)]
    block: [128]
    args: [h_next, h2o.weight, h2o.bias, out, batch_size, hidden_size, output_size]
workspace:
  h_next: {dtype: float32, shape: [batch_size, hidden_size]}
*/
// h' = tanh(W_i2h [x, h] + b_i2h), out = W_h2o h' + b_h2o: the concatenation is read in place.
extern "C" __global__ void input_to_hidden(const float* __restrict__ x, const float* __restrict__ h, const float* __restrict__ w,
                                           const float* __restrict__ bias, float* __restrict__ h_next, int batch, int in_size, int hid) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= batch * hid) return;
  const int b = t / hid, j = t % hid;
  const float* row = w + (long)j * (in_size + hid);
  float acc = bias[j];
  for (int k = 0; k < in_size; ++k) acc += row[k] * x[(long)b * in_size + k];
  for (int k = 0; k < hid; ++k) acc += row[in_size + k] * h[(long)b * hid + k];
  h_next[t] = tanhf(acc);
}

extern "C" __global__ void hidden_to_output(const float* __restrict__ h, const float* __restrict__ w, const float* __restrict__ bias,
                                            float* __restrict__ out, int batch, int hid, int out_size) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= batch * out_size) return;
  const int b = t / out_size, j = t % out_size;
  float acc = bias[j];
  for (int k = 0; k < hid; ++k) acc += w[(long)j * hid + k] * h[(long)b * hid + k];
  out[t] = acc;
}
