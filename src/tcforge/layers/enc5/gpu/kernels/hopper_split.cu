// enc5 form "hopper_split": one window per 2-CTA cluster sharing its work through distributed shared memory; the
// latency form (launches of up to one window per SM).
#include "enc5_split.cuh"

// launch shape (tcforge.layers.enc5.gpu.kernel reads these): blockDim (32, 1, ENC5_THREADS / 32), ENC5_CLUSTER CTAs
// per window along x, ENC5_DYNAMIC_SMEM bytes of dynamic shared memory
constexpr int ENC5_THREADS = 128;
constexpr int ENC5_CLUSTER = 2;
constexpr int ENC5_DYNAMIC_SMEM = SPLIT_SMEM_BYTES;

extern "C" __global__ void __cluster_dims__(ENC5_CLUSTER, 1, 1) __launch_bounds__(ENC5_THREADS, 1)
    enc5_hopper_split(const __grid_constant__ Enc5Params prm) {
    enc5_split_body<HopperSplitForm>(prm);
}
