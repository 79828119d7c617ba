// The enc5 layer as the kernels see it: the 144-byte parameter block, the weight-image map, the epilogue constants
// (enc5.md §3; checked against tcforge.layers.enc5.layout and .epilogues by tests/layers/enc5/test_enc5_native.py)
// and the timing hook of the tool builds.
#pragma once
#include <cstdint>

#include "tcforge/sync.cuh"

// Parameter block: the original's 144-byte layout. +88 and +112 hold plain global pointers (RGBA16F texels and the
// output surface, both (ey, ex, 4) f16) instead of a texture/surface handle; +24 is a debug dump (0 = none); the
// batched launch runs frame blockIdx.z with per-frame strides derived from the extents. +56 (unused by the original)
// carries the split forms' window order (split_window).
struct __align__(8) Enc5Params {
    uint32_t ex, ey;            // +0
    const uint8_t* input;       // +8   5 planes x ey x ex x 32 e4m3
    uint64_t unused16;          // +16
    uint16_t* debug;            // +24  debug stage dump (nullptr: none)
    uint64_t unused32;          // +32
    const uint8_t* weights;     // +40  431,136-byte weight image
    uint8_t* arena;             // +48  5 planes x ey x ex x 32 e4m3 (written by E60)
    uint16_t order[4][3];       // +56  split forms: dispatch-order swaps (a, b, n) of cluster ranges (n = 0: none)
    uint16_t ox, oy;            // +80  block-origin offsets
    uint32_t unused84;          // +84
    const uint16_t* texture;    // +88  RGBA16F texels (ey, ex, 4)
    uint64_t unused96[2];       // +96
    uint16_t* surface;          // +112 RGBA16F surface (ey, ex, 4)
    uint64_t unused120[3];      // +120
};
static_assert(sizeof(Enc5Params) == 144, "parameter block must be 144 bytes");

// The frame a CTA works on (frame blockIdx.z of a batched launch) as the locals every form declares alike: the extents,
// the bytes per arena plane, the input and output arenas, the texels, the surface and the weight image.
#define ENC5_FRAME_POINTERS(prm)                                                    \
    const int ex = (int)(prm).ex, ey = (int)(prm).ey;                               \
    const size_t frame = blockIdx.z;                                                \
    const size_t plane = (size_t)32 * ex * ey;                                      \
    const uint8_t* __restrict__ in = (prm).input + frame * 5 * plane;               \
    uint8_t* __restrict__ arena = (prm).arena + frame * 5 * plane;                  \
    const uint16_t* __restrict__ tex = (prm).texture + frame * (size_t)4 * ex * ey; \
    uint16_t* __restrict__ surf = (prm).surface + frame * (size_t)4 * ex * ey;      \
    const uint8_t* __restrict__ W = (prm).weights

// ---------------------------------------------------------------------------------------------------------------
// Constants and weight-image map (enc5.md §3, tcforge.layers.enc5.layout)
// ---------------------------------------------------------------------------------------------------------------
constexpr int HEAD_SLOT = 27648;
constexpr int OFF_Q = 320, OFF_V = 5440, OFF_SBIAS = 10560, OFF_WO = 22848;
constexpr int OFF_PROJ_BIAS = 221504, OFF_MLP_GAIN = 221824, OFF_OUT_BIAS = 232448;
constexpr int OFF_HEAD = 428544, OFF_HEAD_BIAS = 431104;
constexpr uint32_t C_SCALE = 0x24662466u, C_CLAMP_HI = 0x38733873u, C_CLAMP_LO = 0xB873B873u;
constexpr uint32_t C_CUBIC1 = 0x3B6B3B6Bu, C_CUBIC0 = 0x3D803D80u;
constexpr uint16_t C_EPS = 0x0800;
constexpr uint32_t C_ACT_A = 0x36983698u, C_ACT_B = 0x2D302D30u, C_HALF = 0x38003800u, C_TWO = 0x40004000u;

// MLP chunk i: fc1 at base, its bias at base + 5120, fc2 at base + 5184 (chunks 1..19 repeat with stride 10304)
__device__ __forceinline__ int chunk_base(int i) { return 222144 + 10304 * i + (i > 0 ? 320 : 0); }

// The timing hook of the tool builds (ON = false in the shipped forms: no code). Lane 0 of each warp writes clock64
// into slot k (the phase boundaries 0..11), %globaltimer at k = 0 / 11 into slots 12 / 13 and %smid at k = 0 into 14.
template <bool ON>
__device__ __forceinline__ void stamp(unsigned long long* stamps, int k) {
    if constexpr (ON) {
        if ((threadIdx.x & 31) == 0) {
            stamps[k] = clock64();
            if (k == 0 || k == 11) stamps[k == 0 ? 12 : 13] = tcf::globaltimer();
            if (k == 0) {
                unsigned smid;
                asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
                stamps[14] = smid;
            }
        }
    }
}
