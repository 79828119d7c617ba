// Tool form "hopper_split_occ3_timing": the shipped 3-CTAs-per-SM cluster form with clock64 stamps per warp (as
// hopper_split_timing.cu).
#include "enc5_split.cuh"

constexpr int ENC5_THREADS = 128;  // launch shape: see src/tcforge/layers/enc5/gpu/kernels/hopper_split_occ3.cu
constexpr int ENC5_CLUSTER = 2;
constexpr int ENC5_DYNAMIC_SMEM = SPLIT_SMEM_BYTES_REG_WO;

struct HopperSplitOcc3TimingForm : HopperSplitOcc3Form {
    static constexpr bool timing = true;
};

extern "C" __global__ void __cluster_dims__(ENC5_CLUSTER, 1, 1) __launch_bounds__(ENC5_THREADS, 3)
    enc5_hopper_split_occ3_timing(const __grid_constant__ Enc5Params prm) {
    enc5_split_body<HopperSplitOcc3TimingForm>(prm);
}
