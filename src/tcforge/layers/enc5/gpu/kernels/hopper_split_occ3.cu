// enc5 form "hopper_split_occ3": the 2-CTA-cluster form at three CTAs per SM (launches of 1-2 windows per SM, e.g. one
// 4K frame).
#include "enc5_split.cuh"

// launch shape (tcforge.layers.enc5.gpu.kernel reads these): see hopper_split.cu
constexpr int ENC5_THREADS = 128;
constexpr int ENC5_CLUSTER = 2;
constexpr int ENC5_DYNAMIC_SMEM = SPLIT_SMEM_BYTES_REG_WO;

extern "C" __global__ void __cluster_dims__(ENC5_CLUSTER, 1, 1) __launch_bounds__(ENC5_THREADS, 3)
    enc5_hopper_split_occ3(const __grid_constant__ Enc5Params prm) {
    enc5_split_body<HopperSplitOcc3Form>(prm);
}
