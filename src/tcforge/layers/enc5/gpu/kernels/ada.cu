// enc5 form "ada": the one-CTA form with every mma an exact-integer emulation of the Ada datapath (numerics="ada").
#include "enc5_window.cuh"

// launch shape (tcforge.layers.enc5.gpu.kernel reads these): see hopper.cu
constexpr int ENC5_THREADS = 256;
constexpr int ENC5_CLUSTER = 1;
constexpr int ENC5_DYNAMIC_SMEM = 0;

extern "C" __global__ void __launch_bounds__(ENC5_THREADS, 1) enc5_ada(const __grid_constant__ Enc5Params prm) {
    enc5_body<AdaForm>(prm);
}
