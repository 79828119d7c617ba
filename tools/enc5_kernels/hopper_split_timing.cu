// Tool form "hopper_split_timing": the shipped 2-CTA-cluster form with clock64 stamps per warp (8 stamp rows per
// window: CTA 0's warps 0..3, then CTA 1's; row 15 holds the cluster's place in launch order).
#include "enc5_split.cuh"

constexpr int ENC5_THREADS = 128;  // launch shape: see src/tcforge/layers/enc5/gpu/kernels/hopper_split.cu
constexpr int ENC5_CLUSTER = 2;
constexpr int ENC5_DYNAMIC_SMEM = SPLIT_SMEM_BYTES;

struct HopperSplitTimingForm : HopperSplitForm {
    static constexpr bool timing = true;
};

extern "C" __global__ void __cluster_dims__(ENC5_CLUSTER, 1, 1) __launch_bounds__(ENC5_THREADS, 1)
    enc5_hopper_split_timing(const __grid_constant__ Enc5Params prm) {
    enc5_split_body<HopperSplitTimingForm>(prm);
}
