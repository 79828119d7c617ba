// enc5 form "hopper": one CTA per window, 8 warps; the throughput form (launches of more than ~2 windows per SM).
#include "enc5_window.cuh"

// launch shape (tcforge.layers.enc5.gpu.kernel reads these): blockDim (32, 1, ENC5_THREADS / 32), ENC5_CLUSTER CTAs
// per window along x, ENC5_DYNAMIC_SMEM bytes of dynamic shared memory
constexpr int ENC5_THREADS = 256;
constexpr int ENC5_CLUSTER = 1;
constexpr int ENC5_DYNAMIC_SMEM = 0;

extern "C" __global__ void __launch_bounds__(ENC5_THREADS, 1) enc5_hopper(const __grid_constant__ Enc5Params prm) {
    enc5_body<HopperForm>(prm);
}
