// Tool kernel "tile_check": single m16n8k32 tiles, the native e4m3 mma against the hand-issued HMMA pair (unpack_a +
// mma_hopper_f16a) that P1-P10 use; tools/enc5_device_check.py compares both with tcforge.numerics' Hopper model.
#include "enc5_mma.cuh"

constexpr int ENC5_THREADS = 256;  // one warp per tile, 8 tiles per CTA (launched as blockDim (256, 1, 1))
constexpr int ENC5_CLUSTER = 1;
constexpr int ENC5_DYNAMIC_SMEM = 0;

// Warp w computes tile w both ways. Operands in fragment order: per tile and lane A 4 words, B 2 words, C 2 words.
extern "C" __global__ void enc5_tile_check(const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d_native,
                                           uint32_t* d_split, int tiles) {
    const int lane = threadIdx.x & 31;
    const int tile = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (tile >= tiles) return;
    const size_t i = (size_t)tile * 32 + lane;
    const uint32_t a0 = a[4 * i], a1 = a[4 * i + 1], a2 = a[4 * i + 2], a3 = a[4 * i + 3];
    const uint32_t b0 = b[2 * i], b1 = b[2 * i + 1], c0 = c[2 * i], c1 = c[2 * i + 1];
    uint32_t n0, n1, s0, s1, af[2][4];
    mma_hopper(n0, n1, a0, a1, a2, a3, b0, b1, c0, c1);
    unpack_a(af, a0, a1, a2, a3);
    mma_hopper_f16a(s0, s1, af, b0, b1, c0, c1);
    d_native[2 * i] = n0; d_native[2 * i + 1] = n1;
    d_split[2 * i] = s0; d_split[2 * i + 1] = s1;
}
