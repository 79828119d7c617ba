// Test form for `tcforge spec` (tests/layers/enc5/test_native_spec.py): the one-CTA form with every loop unrolled,
// P1-P10's A staged as e4m3 and the MLP weights loaded from global memory, so every mma reads as the layer's
// m16n8k32 e4m3 with its weights from the weight image. PTX only (never launched).
#include "enc5_window.cuh"

struct SpecPlainForm : WindowForm {
    static constexpr bool qv_f16a = false;
    static constexpr int j_unroll = 8;
    static constexpr int ks_unroll = 5;
    static constexpr int mlp_unroll = 20;
};

extern "C" __global__ void __launch_bounds__(256, 1) enc5_spec_plain(const __grid_constant__ Enc5Params prm) {
    enc5_body<SpecPlainForm>(prm);
}
