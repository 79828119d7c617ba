// Test form: the shipped one-CTA form (HopperForm) with every loop unrolled, for counting its mma in the PTX.
#include "enc5_window.cuh"

struct SpecShippedForm : HopperForm {
    static constexpr int j_unroll = 8;
    static constexpr int ks_unroll = 5;
    static constexpr int mlp_unroll = 20;
};

extern "C" __global__ void __launch_bounds__(256, 1) enc5_spec_shipped(const __grid_constant__ Enc5Params prm) {
    enc5_body<SpecShippedForm>(prm);
}
