// Tool form "hopper_debug": the one-CTA form dumping the accumulators of phases 9-61 into prm.debug (the DBG_* layout
// of enc5_window.cuh; tcforge.layers.enc5.gpu.kernel.debug_layout), compared with the reference's stages by
// tools/enc5_device_check.py. Loops rolled and the MLP weights through registers (with the ring it would spill).
#include "enc5_window.cuh"

constexpr int ENC5_THREADS = 256;  // launch shape: see src/tcforge/layers/enc5/gpu/kernels/hopper.cu
constexpr int ENC5_CLUSTER = 1;
constexpr int ENC5_DYNAMIC_SMEM = 0;

struct HopperDebugForm : WindowForm {
    static constexpr bool debug = true;
};

extern "C" __global__ void __launch_bounds__(ENC5_THREADS, 1)
    enc5_hopper_debug(const __grid_constant__ Enc5Params prm) {
    enc5_body<HopperDebugForm>(prm);
}
