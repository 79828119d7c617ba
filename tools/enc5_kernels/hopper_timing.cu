// Tool form "hopper_timing": the shipped one-CTA form with clock64 stamps per warp at the phase boundaries (16 int64
// per warp and window in prm.debug; stamp() in enc5_layer.cuh), read by tools/enc5_device_check.py's profile.
#include "enc5_window.cuh"

constexpr int ENC5_THREADS = 256;  // launch shape: see src/tcforge/layers/enc5/gpu/kernels/hopper.cu
constexpr int ENC5_CLUSTER = 1;
constexpr int ENC5_DYNAMIC_SMEM = 0;

struct HopperTimingForm : HopperForm {
    static constexpr bool timing = true;
};

extern "C" __global__ void __launch_bounds__(ENC5_THREADS, 1)
    enc5_hopper_timing(const __grid_constant__ Enc5Params prm) {
    enc5_body<HopperTimingForm>(prm);
}
