// Test form for `tcforge spec`: the 2-CTA-cluster form (HopperSplitForm) with every loop unrolled. PTX only.
#include "enc5_split.cuh"

struct SpecSplitForm : HopperSplitForm {
    static constexpr int j_unroll = 8;
    static constexpr int ks_unroll = 5;
    static constexpr int mlp_unroll = 20;
};

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    enc5_spec_split(const __grid_constant__ Enc5Params prm) {
    enc5_split_body<SpecSplitForm>(prm);
}
