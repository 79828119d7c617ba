// Test kernel for tcforge spec: the C++ WMMA API (wmma.mma.sync.aligned.m16n16k16 f16 -> f32), 2 x 2 fragments of a
// 32 x 32 warp tile over K = 32 (2 k-steps): one phase of 8 wmma.mma, 4 chains of 2, M = 32, N = 32, K = 32.
// nvcc -ptx -arch=sm_80 -O3 wmma_chain.cu -o wmma_chain.ptx
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void wmma_chain(const half* __restrict__ a, const half* __restrict__ b, float* __restrict__ c) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa[2][2];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb[2][2];
#pragma unroll
    for (int k = 0; k < 2; ++k)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            wmma::load_matrix_sync(fa[k][i], a + (16 * i) * 32 + 16 * k, 32);
            wmma::load_matrix_sync(fb[k][i], b + (16 * i) * 32 + 16 * k, 32);
        }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
#pragma unroll
    for (int k = 0; k < 2; ++k)
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[k][i], fb[k][j], acc[i][j]);
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(c + (16 * i) * 32 + 16 * j, acc[i][j], 32, wmma::mem_row_major);
}
