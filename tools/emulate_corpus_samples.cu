// CUDA-sample-style kernels for the emulator corpus (tools/emulate_corpus.py): warp shuffles, shared-memory
// reductions and tiling, atomics, scans, divergent loops, sorting, special-value float math and inline-PTX mma.sync
// fed special operands (16-bit, e4m3 and 8-bit integer). Built with `nvcc -ptx -O3 -arch=sm_80` (everything but the
// e4m3 mma) and `-arch=sm_89`.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <stdint.h>
#include <type_traits>

#define FULL 0xffffffffu

// Per-warp float sum (shfl.down), int max (shfl.xor), and a broadcast within 8-lane segments (width 8).
extern "C" __global__ void warp_reduce(const float* x, const int* v, float* sums, int* maxs, int* seg, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = i < n ? x[i] : 0.0f;
    int m = i < n ? v[i] : -2147483647 - 1;
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_down_sync(FULL, s, o);
        m = max(m, __shfl_xor_sync(FULL, m, o));
    }
    int b = __shfl_sync(FULL, i < n ? v[i] : 0, 3, 8);
    int u = __shfl_up_sync(FULL, b, 2, 8);
    if (i < n) seg[i] = b ^ u;
    if ((threadIdx.x & 31) == 0) {
        sums[i >> 5] = s;
        maxs[i >> 5] = m;
    }
}

// Tree reduction in shared memory, grid-stride accumulation, the last warp unrolled with shuffles.
template <unsigned BS>
__device__ void block_sum(const float* x, float* out, unsigned n)
{
    __shared__ float sdata[BS];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * (BS * 2) + tid;
    unsigned stride = BS * 2 * gridDim.x;
    float s = 0.0f;
    while (i < n) {
        s += x[i];
        if (i + BS < n) s += x[i + BS];
        i += stride;
    }
    sdata[tid] = s;
    __syncthreads();
    for (unsigned k = BS / 2; k > 32; k >>= 1) {
        if (tid < k) sdata[tid] = s = s + sdata[tid + k];
        __syncthreads();
    }
    if (tid < 32) {
        s += sdata[tid + 32];
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(FULL, s, o);
    }
    if (tid == 0) out[blockIdx.x] = s;
}

extern "C" __global__ void block_reduce(const float* x, float* out, unsigned n) { block_sum<256>(x, out, n); }

// C = alpha * A B + beta * C with 16x16 shared-memory tiles (SIMT), bounds-checked edges.
#define T 16
extern "C" __global__ void sgemm_tiled(const float* A, const float* B, float* C, int M, int N, int K, float alpha,
                                       float beta)
{
    __shared__ float As[T][T];
    __shared__ float Bs[T][T + 1];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = alpha * acc + beta * C[row * N + col];
}

// 256-bin byte histogram: shared atomics per block, merged with global atomics; plus global max / or / min.
extern "C" __global__ void histogram256(const uint8_t* data, unsigned n, unsigned* hist, unsigned* stats)
{
    __shared__ unsigned h[256];
    for (unsigned j = threadIdx.x; j < 256; j += blockDim.x) h[j] = 0;
    __syncthreads();
    unsigned mx = 0, orr = 0, mn = 255;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        unsigned b = data[i];
        atomicAdd(&h[b], 1u);
        mx = max(mx, b);
        mn = min(mn, b);
        orr |= 1u << (b & 31);
    }
    __syncthreads();
    for (unsigned j = threadIdx.x; j < 256; j += blockDim.x)
        if (h[j]) atomicAdd(&hist[j], h[j]);
    atomicMax(&stats[0], mx);
    atomicOr(&stats[1], orr);
    atomicMin(&stats[2], mn);
    atomicAdd(&stats[3], 1u);
}

// Block-wide inclusive scan: warp scans by shfl.up, warp totals scanned in shared memory, then added back.
extern "C" __global__ void scan_block(const float* x, float* y, const int* xi, int* yi, int n)
{
    __shared__ float wsum[32];
    __shared__ int wisum[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float v = i < n ? x[i] : 0.0f;
    int vi = i < n ? xi[i] : 0;
    for (int o = 1; o < 32; o <<= 1) {
        float t = __shfl_up_sync(FULL, v, o);
        int ti = __shfl_up_sync(FULL, vi, o);
        if (lane >= o) {
            v += t;
            vi += ti;
        }
    }
    if (lane == 31) {
        wsum[warp] = v;
        wisum[warp] = vi;
    }
    __syncthreads();
    if (warp == 0) {
        int nw = blockDim.x >> 5;
        float w = lane < nw ? wsum[lane] : 0.0f;
        int wi = lane < nw ? wisum[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            float t = __shfl_up_sync(FULL, w, o);
            int ti = __shfl_up_sync(FULL, wi, o);
            if (lane >= o) {
                w += t;
                wi += ti;
            }
        }
        if (lane < nw) {
            wsum[lane] = w;
            wisum[lane] = wi;
        }
    }
    __syncthreads();
    if (warp > 0) {
        v += wsum[warp - 1];
        vi += wisum[warp - 1];
    }
    if (i < n) {
        y[i] = v;
        yi[i] = vi;
    }
}

// Hillis-Steele scan with double-buffered shared memory (a different barrier pattern from scan_block).
extern "C" __global__ void scan_hillis(const unsigned* x, unsigned* y, int n)
{
    extern __shared__ unsigned buf[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    int pout = 0, pin = 1;
    buf[t] = i < n ? x[i] : 0u;
    __syncthreads();
    for (int o = 1; o < blockDim.x; o <<= 1) {
        pout = 1 - pout;
        pin = 1 - pout;
        unsigned v = buf[pin * blockDim.x + t];
        if (t >= o) v += buf[pin * blockDim.x + t - o];
        buf[pout * blockDim.x + t] = v;
        __syncthreads();
    }
    if (i < n) y[i] = buf[pout * blockDim.x + t];
}

// Collatz steps per start value: a divergent while loop on 64-bit integers with an iteration cap.
extern "C" __global__ void collatz(const unsigned* start, unsigned* steps, unsigned long long* peak, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long v = start[i], top = v;
    unsigned s = 0;
    while (v > 1 && s < 1000) {
        v = (v & 1) ? 3 * v + 1 : v >> 1;
        top = v > top ? v : top;
        ++s;
    }
    steps[i] = s;
    peak[i] = top;
}

// Mandelbrot escape counts: a divergent float loop per pixel.
extern "C" __global__ void mandelbrot(unsigned* iters, float* mag, int w, int h, float x0, float y0, float dx,
                                      float dy, int maxit)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= w || py >= h) return;
    float cx = x0 + px * dx, cy = y0 + py * dy, zx = 0.0f, zy = 0.0f;
    int k = 0;
    for (; k < maxit; ++k) {
        float xx = zx * zx, yy = zy * zy;
        if (xx + yy > 4.0f) break;
        zy = 2.0f * zx * zy + cy;
        zx = xx - yy + cx;
    }
    iters[py * w + px] = k;
    mag[py * w + px] = zx * zx + zy * zy;
}

// Bitonic sort of 1024 (key, value) pairs per block in shared memory, 512 threads.
extern "C" __global__ void bitonic_sort(unsigned* keys, unsigned* vals)
{
    __shared__ unsigned sk[1024], sv[1024];
    unsigned* k = keys + blockIdx.x * 1024;
    unsigned* v = vals + blockIdx.x * 1024;
    for (int j = threadIdx.x; j < 1024; j += blockDim.x) {
        sk[j] = k[j];
        sv[j] = v[j];
    }
    __syncthreads();
    for (unsigned size = 2; size <= 1024; size <<= 1) {
        for (unsigned stride = size >> 1; stride > 0; stride >>= 1) {
            unsigned t = threadIdx.x;
            unsigned pos = 2 * t - (t & (stride - 1));
            bool up = ((pos & size) == 0);
            unsigned a = sk[pos], b = sk[pos + stride];
            if ((a > b) == up) {
                sk[pos] = b;
                sk[pos + stride] = a;
                unsigned tv = sv[pos];
                sv[pos] = sv[pos + stride];
                sv[pos + stride] = tv;
            }
            __syncthreads();
        }
    }
    for (int j = threadIdx.x; j < 1024; j += blockDim.x) {
        k[j] = sk[j];
        v[j] = sv[j];
    }
}

// Matrix transpose through a 32x33 padded shared tile (blocks of 32x8 threads), ragged edges.
extern "C" __global__ void transpose_padded(const float* in, float* out, int w, int h)
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Stream compaction inside each block: ballot + popc ranks, per-warp offsets in shared memory; any/all votes.
extern "C" __global__ void compact(const int* x, int* out, int* counts, unsigned* votes, int n)
{
    __shared__ int woff[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int v = i < n ? x[i] : 0;
    bool keep = v > 0 && (v % 3) != 0;
    unsigned b = __ballot_sync(FULL, keep);
    int rank = __popc(b & ((1u << lane) - 1u));
    if (lane == 0) woff[warp] = __popc(b);
    int any = __any_sync(FULL, v < -1000000), all = __all_sync(FULL, v != 0);
    __syncthreads();
    if (threadIdx.x == 0) {
        int s = 0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) {
            int c = woff[w];
            woff[w] = s;
            s += c;
        }
        counts[blockIdx.x] = s;
    }
    __syncthreads();
    if (keep) out[blockIdx.x * blockDim.x + woff[warp] + rank] = v;
    if (lane == 0) votes[i >> 5] = b ^ (unsigned)(any << 1 | all);
}

// One warp per row: max by shfl.xor, exp, sum, then an IEEE division (no fast math).
extern "C" __global__ void softmax_warp(const float* x, float* y, int rows, int cols)
{
    int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= rows) return;
    const float* r = x + row * cols;
    float m = -INFINITY;
    for (int c = lane; c < cols; c += 32) m = fmaxf(m, r[c]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(FULL, m, o));
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32) s += expf(r[c] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(FULL, s, o);
    for (int c = lane; c < cols; c += 32) y[row * cols + c] = expf(r[c] - m) / s;
}

// Layer norm, one block per row: two shared-memory reductions, sqrtf and an IEEE division.
extern "C" __global__ void layernorm_block(const float* x, const float* g, const float* b, float* y, int cols,
                                          float eps)
{
    __shared__ float red[128];
    const float* r = x + blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += r[c];
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    float mean = red[0] / cols;
    __syncthreads();
    float q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float d = r[c] - mean;
        q += d * d;
    }
    red[threadIdx.x] = q;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    float inv = 1.0f / sqrtf(red[0] / cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) y[blockIdx.x * cols + c] = (r[c] - mean) * inv * g[c] + b[c];
}

// Integer bit tricks: hashes, funnel shifts, byte permutes, bit reversal, leading zeros, high products, div/rem.
extern "C" __global__ void bit_mix(const unsigned* a, const unsigned* b, unsigned* out, unsigned long long* out64,
                                   int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i], y = b[i];
    unsigned h = x ^ (x >> 16);
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    unsigned f = __funnelshift_l(x, y, y & 31) ^ __funnelshift_rc(y, x, x);
    unsigned p = __byte_perm(x, y, (y >> 3) & 0x7777);
    unsigned r = __brev(x) + __clz(y) + __popc(x & y) + __ffs(x) + __umulhi(x, y);
    unsigned d = x / (y | 1u) + x % ((y >> 7) | 1u);
    int sd = (int)x / ((int)(y >> 2) | 1) + (int)y % ((int)(x >> 9) | 3);
    unsigned long long w = (unsigned long long)x * y + __umul64hi((unsigned long long)x << 17 | y, 0x9e3779b97f4a7c15ull);
    out[4 * i] = h;
    out[4 * i + 1] = f ^ p;
    out[4 * i + 2] = r + d;
    out[4 * i + 3] = (unsigned)sd;
    out64[i] = w ^ (w >> 29) ^ ((unsigned long long)__sad(x, y, 7u) << 40) ^ __brevll(w) / ((w & 0xffff) | 1);
}

// Packed half and bfloat16 arithmetic: fma, max, relu and conversions from float with specials in the inputs.
extern "C" __global__ void half2_ops(const __half2* x, const __half2* y, const float* s, __half2* out, __nv_bfloat162* outb,
                                    int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 a = x[i], b = y[i];
    __half2 sc = __float2half2_rn(s[i]);
    __half2 f = __hfma2(a, sc, b);
    __half2 m = __hmax2(__hmul2(a, b), __hsub2(a, b));
    __half2 z = __hmax2(f, __float2half2_rn(0.0f));
    out[3 * i] = f;
    out[3 * i + 1] = m;
    out[3 * i + 2] = __hadd2(z, __hneg2(__habs2(m)));
    float2 fa = __half22float2(a), fb = __half22float2(b);
    __nv_bfloat162 ba = __floats2bfloat162_rn(fa.x, fa.y), bb = __floats2bfloat162_rn(fb.x * s[i], fb.y);
    outb[i] = __hfma2(ba, bb, __floats2bfloat162_rn(s[i], -s[i]));
}

// f32 arithmetic on special values (NaN, infinities, subnormals, signed zeros): no fast math, IEEE everywhere.
extern "C" __global__ void float_specials(const float* a, const float* b, const float* c, float* out, int* outi, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i], z = c[i];
    out[8 * i] = fmaf(x, y, z);
    out[8 * i + 1] = x * y + z * 0.5f;
    out[8 * i + 2] = x / y;
    out[8 * i + 3] = sqrtf(fabsf(z));
    out[8 * i + 4] = fminf(x, y) - fmaxf(y, z);
    out[8 * i + 5] = copysignf(floorf(x), y) + truncf(z) - rintf(y);
    out[8 * i + 6] = __fadd_rz(x, y) + __fmul_rd(y, z);
    out[8 * i + 7] = (float)(double)x * (double)y;
    outi[2 * i] = __float2int_rn(z * 65536.0f) ^ (int)__float_as_uint(ceilf(x));
    outi[2 * i + 1] = (int)__float2uint_rz(y) + (isnan(x) ? 1 : 0) + (isinf(y) ? 2 : 0) + (signbit(z) ? 4 : 0);
}

// sinf/cosf/logf/expf with accurate (non-fast-math) range reduction: polynomials, Payne-Hanek for huge arguments
// (a local-memory array and a module-level constant table).
extern "C" __global__ void transcend(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float s, c;
    sincosf(v, &s, &c);
    out[4 * i] = s;
    out[4 * i + 1] = c;
    out[4 * i + 2] = logf(fabsf(v));
    out[4 * i + 3] = expf(v * 1e-2f);
}

// Divergent control: a non-inlined device function with early returns, called from both sides of a branch, loops
// with break/continue and a switch.
__device__ __noinline__ unsigned walk(unsigned v, unsigned limit)
{
    unsigned acc = 0;
    for (unsigned k = 0; k < limit; ++k) {
        if ((v & 7) == 3) continue;
        if (v == 0) return acc + 1000;
        acc += v & 0xff;
        v = v * 1103515245u + 12345u;
        if ((v >> 28) == 5) break;
        v >>= 1;
    }
    return acc;
}

// Block-wide votes (__syncthreads_count / _and / _or: bar.red inside nvcc's own { } blocks) and reads of an
// initialised __constant__ table, directly and through a generic pointer.
__constant__ float c_weights[8] = {0.5f, -1.25f, 3.0f, 1e-3f, -0.0f, 7.5f, 65504.0f, 1.0e-20f};
extern "C" __global__ void block_votes(const int* x, const float* f, int* out, float* outf, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    int c = __syncthreads_count(v > 0);
    int a = __syncthreads_and(v != 0);
    int o = __syncthreads_or(v < -100);
    if (i < n) {
        out[3 * i] = c, out[3 * i + 1] = a, out[3 * i + 2] = o;
        const float* w = (v & 1) ? c_weights : c_weights + 4;
        outf[i] = f[i] * c_weights[i & 7] + w[v & 3];
    }
}

extern "C" __global__ void divergent(const unsigned* x, unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned v = x[i], r;
    if (v & 1) {
        r = walk(v, v % 37);
    } else {
        r = walk(v ^ 0xdeadbeefu, 5 + (v % 11)) * 3;
        while (r > 1000) r -= 997;
    }
    switch ((v >> 4) % 6) {
    case 0: r += 11; break;
    case 1: r ^= 0x55; break;
    case 2: r = r * 7; break;
    case 3: r = __popc(r) + (r << 3); break;
    case 4: r = r > 64 ? r - 64 : 64 - r; break;
    default: r = ~r;
    }
    out[i] = r;
}

// Inline-PTX mma.sync, one m16n8 tile per warp, operands per lane from global memory in fragment order
// (fragment register j of lane l at [warp][j][l]); chains K-steps when ksteps > 1.
extern "C" __global__ void mma_f16_special(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* d,
                                           int ksteps)
{
    int lane = threadIdx.x & 31, warp = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    unsigned c0 = c[(warp * 2 + 0) * 32 + lane], c1 = c[(warp * 2 + 1) * 32 + lane];
    for (int s = 0; s < ksteps; ++s) {
        const unsigned* pa = a + ((warp * ksteps + s) * 4) * 32 + lane;
        const unsigned* pb = b + ((warp * ksteps + s) * 2) * 32 + lane;
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, "
                     "{%0, %1};"
                     : "+r"(c0), "+r"(c1)
                     : "r"(pa[0]), "r"(pa[32]), "r"(pa[64]), "r"(pa[96]), "r"(pb[0]), "r"(pb[32]));
    }
    d[(warp * 2 + 0) * 32 + lane] = c0;
    d[(warp * 2 + 1) * 32 + lane] = c1;
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
extern "C" __global__ void mma_e4m3_special(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* d,
                                            int ksteps)
{
    int lane = threadIdx.x & 31, warp = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    unsigned c0 = c[(warp * 2 + 0) * 32 + lane], c1 = c[(warp * 2 + 1) * 32 + lane];
    for (int s = 0; s < ksteps; ++s) {
        const unsigned* pa = a + ((warp * ksteps + s) * 4) * 32 + lane;
        const unsigned* pb = b + ((warp * ksteps + s) * 2) * 32 + lane;
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, "
                     "{%0, %1};"
                     : "+r"(c0), "+r"(c1)
                     : "r"(pa[0]), "r"(pa[32]), "r"(pa[64]), "r"(pa[96]), "r"(pb[0]), "r"(pb[32]));
    }
    d[(warp * 2 + 0) * 32 + lane] = c0;
    d[(warp * 2 + 1) * 32 + lane] = c1;
}
#endif

// Integer mma.sync, one tile per warp, operands per lane in fragment order (A 4 words, B 2, C 4 per lane and warp;
// the smaller K of each width reads the first 2 and 1, an m8n8 shape the first A and B word and 2 of C); `form`
// picks m16n8: k32 s8.s8, k32 u8.s8 .satfinite, k16 s8.u8, k16 u8.u8 .satfinite, k64 s4.s4, k32 u4.s4 .satfinite;
// m8n8: k16 s8.u8, k32 u4.s4 .satfinite; b1: m8n8k128 .xor.popc, m16n8k128 .and.popc, m16n8k256 .xor / .and.popc.
#define TCF_INT_MMA_4X2(S)                                                                                          \
    asm volatile("mma.sync.aligned." S " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"          \
                 : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3)                                                           \
                 : "r"(pa[0]), "r"(pa[32]), "r"(pa[64]), "r"(pa[96]), "r"(pb[0]), "r"(pb[32]))
#define TCF_INT_MMA_2X1(S)                                                                                          \
    asm volatile("mma.sync.aligned." S " {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"                      \
                 : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3)                                                           \
                 : "r"(pa[0]), "r"(pa[32]), "r"(pb[0]))
#define TCF_INT_MMA_1X1(S)                                                                                          \
    asm volatile("mma.sync.aligned." S " {%0, %1}, {%2}, {%3}, {%0, %1};" : "+r"(c0), "+r"(c1) : "r"(pa[0]), "r"(pb[0]))
extern "C" __global__ void mma_int_special(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* d,
                                           int form)
{
    int lane = threadIdx.x & 31, warp = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const unsigned* pa = a + warp * 4 * 32 + lane;
    const unsigned* pb = b + warp * 2 * 32 + lane;
    const unsigned* pc = c + warp * 4 * 32 + lane;
    unsigned c0 = pc[0], c1 = pc[32], c2 = pc[64], c3 = pc[96];
    switch (form) {
    case 0: TCF_INT_MMA_4X2("m16n8k32.row.col.s32.s8.s8.s32"); break;
    case 1: TCF_INT_MMA_4X2("m16n8k32.row.col.satfinite.s32.u8.s8.s32"); break;
    case 2: TCF_INT_MMA_2X1("m16n8k16.row.col.s32.s8.u8.s32"); break;
    case 3: TCF_INT_MMA_2X1("m16n8k16.row.col.satfinite.s32.u8.u8.s32"); break;
    case 4: TCF_INT_MMA_4X2("m16n8k64.row.col.s32.s4.s4.s32"); break;
    case 5: TCF_INT_MMA_2X1("m16n8k32.row.col.satfinite.s32.u4.s4.s32"); break;
    case 6: TCF_INT_MMA_1X1("m8n8k16.row.col.s32.s8.u8.s32"); break;
    case 7: TCF_INT_MMA_1X1("m8n8k32.row.col.satfinite.s32.u4.s4.s32"); break;
    case 8: TCF_INT_MMA_1X1("m8n8k128.row.col.s32.b1.b1.s32.xor.popc"); break;
    case 9: TCF_INT_MMA_2X1("m16n8k128.row.col.s32.b1.b1.s32.and.popc"); break;
    case 10: TCF_INT_MMA_4X2("m16n8k256.row.col.s32.b1.b1.s32.xor.popc"); break;
    default: TCF_INT_MMA_4X2("m16n8k256.row.col.s32.b1.b1.s32.and.popc"); break;
    }
    unsigned* pd = d + warp * 4 * 32 + lane;
    pd[0] = c0, pd[32] = c1, pd[64] = c2, pd[96] = c3;
}

// The mma.sync forms whose fragments are A 2 words, B 1, C and D 4 (f16 C and D: 2) per lane, one tile per warp:
// `form` 0-2 m16n8k8 (HMMA.1688) f32.f16.f16, f32.bf16.bf16, f16.f16.f16; 3-4 FP8 m16n8k16 (two HMMA.1688 steps
// over the unpacked bytes, then C; sm_89+) f32.e4m3.e4m3, f16.e5m2.e4m3.
#define TCF_A2B1_F32(TYPES)                                                                                           \
    asm volatile("mma.sync.aligned." TYPES " {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"                   \
                 : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3) : "r"(pa[0]), "r"(pa[32]), "r"(pb[0]))
#define TCF_A2B1_F16(TYPES)                                                                                           \
    asm volatile("mma.sync.aligned." TYPES " {%0, %1}, {%2, %3}, {%4}, {%0, %1};"                                    \
                 : "+r"(c0), "+r"(c1) : "r"(pa[0]), "r"(pa[32]), "r"(pb[0]))
extern "C" __global__ void mma_a2b1_special(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* d,
                                            int form)
{
    int lane = threadIdx.x & 31, warp = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const unsigned *pa = a + warp * 2 * 32 + lane, *pb = b + warp * 32 + lane, *pc = c + warp * 4 * 32 + lane;
    unsigned c0 = pc[0], c1 = pc[32], c2 = pc[64], c3 = pc[96];
    switch (form) {
    case 0: TCF_A2B1_F32("m16n8k8.row.col.f32.f16.f16.f32"); break;
    case 1: TCF_A2B1_F32("m16n8k8.row.col.f32.bf16.bf16.f32"); break;
    case 2: TCF_A2B1_F16("m16n8k8.row.col.f16.f16.f16.f16"); break;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
    case 3: TCF_A2B1_F32("m16n8k16.row.col.f32.e4m3.e4m3.f32"); break;
    case 4: TCF_A2B1_F16("m16n8k16.row.col.f16.e5m2.e4m3.f16"); break;
#endif
    }
    unsigned* pd = d + warp * 4 * 32 + lane;
    pd[0] = c0, pd[32] = c1, pd[64] = c2, pd[96] = c3;
}

// tf32 mma.sync (HMMA.1688 / 1684 .TF32), one tile per warp, fragments per lane (A 4 words, B 2, C and D 4): `form`
// 0 m16n8k8 on the raw f32 words (low 13 bits set), 1 m16n8k8 on cvt.rna.tf32.f32 of them, 2 m16n8k4 raw.
extern "C" __global__ void mma_tf32_special(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* d,
                                            int form)
{
    int lane = threadIdx.x & 31, warp = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const unsigned *pa = a + warp * 4 * 32 + lane, *pb = b + warp * 2 * 32 + lane, *pc = c + warp * 4 * 32 + lane;
    unsigned a0 = pa[0], a1 = pa[32], a2 = pa[64], a3 = pa[96], b0 = pb[0], b1 = pb[32];
    unsigned c0 = pc[0], c1 = pc[32], c2 = pc[64], c3 = pc[96];
    if (form == 1) {
        asm("cvt.rna.tf32.f32 %0, %0; cvt.rna.tf32.f32 %1, %1; cvt.rna.tf32.f32 %2, %2; cvt.rna.tf32.f32 %3, %3;"
            : "+r"(a0), "+r"(a1), "+r"(a2), "+r"(a3));
        asm("cvt.rna.tf32.f32 %0, %0; cvt.rna.tf32.f32 %1, %1;" : "+r"(b0), "+r"(b1));
    }
    if (form == 2) {
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
                     "{%0, %1, %2, %3};"
                     : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3) : "r"(a0), "r"(a1), "r"(b0));
    } else {
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};"
                     : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    unsigned* pd = d + warp * 4 * 32 + lane;
    pd[0] = c0, pd[32] = c1, pd[64] = c2, pd[96] = c3;
}

// 16-bit mma.sync m8n8k4 (four quad-pair products per warp), fragments per lane (A 2 words, B 2, C and D 8 f32 words
// or 4 f16x2 words in 8 slots; ptxas lowers the instruction to FFMA sequences): `form` 0 row.col f32, 1 col.row
// f32, 2 row.row f16, 3 col.col f16, 4 col.col f16 C -> f32 D.
#define TCF_M884_F32(LAYOUT)                                                                                          \
    asm volatile("mma.sync.aligned.m8n8k4." LAYOUT ".f32.f16.f16.f32 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9}, "  \
                 "{%10, %11}, {%0, %1, %2, %3, %4, %5, %6, %7};"                                                      \
                 : "+r"(r[0]), "+r"(r[1]), "+r"(r[2]), "+r"(r[3]), "+r"(r[4]), "+r"(r[5]), "+r"(r[6]), "+r"(r[7]) \
                 : "r"(pa[0]), "r"(pa[32]), "r"(pb[0]), "r"(pb[32]))
#define TCF_M884_F16(LAYOUT)                                                                                          \
    asm volatile("mma.sync.aligned.m8n8k4." LAYOUT ".f16.f16.f16.f16 {%0, %1, %2, %3}, {%4, %5}, {%6, %7}, "         \
                 "{%0, %1, %2, %3};"                                                                                  \
                 : "+r"(r[0]), "+r"(r[1]), "+r"(r[2]), "+r"(r[3]) : "r"(pa[0]), "r"(pa[32]), "r"(pb[0]), "r"(pb[32]))
extern "C" __global__ void mma_m884_special(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* d,
                                            int form)
{
    int lane = threadIdx.x & 31, warp = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const unsigned *pa = a + warp * 2 * 32 + lane, *pb = b + warp * 2 * 32 + lane, *pc = c + warp * 8 * 32 + lane;
    unsigned r[8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
        r[i] = pc[32 * i];
    switch (form) {
    case 0: TCF_M884_F32("row.col"); break;
    case 1: TCF_M884_F32("col.row"); break;
    case 2: TCF_M884_F16("row.row"); break;
    case 3: TCF_M884_F16("col.col"); break;
    default:
        asm volatile("mma.sync.aligned.m8n8k4.col.col.f32.f16.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9}, "
                     "{%10, %11}, {%12, %13, %14, %15};"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
                     : "r"(pa[0]), "r"(pa[32]), "r"(pb[0]), "r"(pb[32]), "r"(pc[0]), "r"(pc[32]), "r"(pc[64]),
                       "r"(pc[96]));
        break;
    }
    unsigned* pd = d + warp * 8 * 32 + lane;
#pragma unroll
    for (int i = 0; i < 8; ++i)
        pd[32 * i] = r[i];
}

// f64 mma.sync m8n8k4 (DMMA), one tile per warp: A and B one double per lane, C and D two, in fragment order.
extern "C" __global__ void mma_f64_special(const double* a, const double* b, const double* c, double* d)
{
    int lane = threadIdx.x & 31, warp = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    double c0 = c[(warp * 2) * 32 + lane], c1 = c[(warp * 2 + 1) * 32 + lane];
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                 : "+d"(c0), "+d"(c1) : "d"(a[warp * 32 + lane]), "d"(b[warp * 32 + lane]));
    d[(warp * 2) * 32 + lane] = c0;
    d[(warp * 2 + 1) * 32 + lane] = c1;
}

// sm_90's f64 mma.sync m16n8k4 / k8 / k16 (DMMA.16x8x16 for k16), one tile per warp: A 2 / 4 / 8 doubles per lane,
// B 1 / 2 / 4, C and D 4, in fragment order ([warp][register][lane], A 8 and B 4 register slots): `form` 0 k4, 1 k8,
// 2 k16.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
extern "C" __global__ void mma_f64_m16_special(const double* a, const double* b, const double* c, double* d,
                                               int form)
{
    int lane = threadIdx.x & 31, warp = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const double *pa = a + warp * 8 * 32 + lane, *pb = b + warp * 4 * 32 + lane, *pc = c + warp * 4 * 32 + lane;
    double c0 = pc[0], c1 = pc[32], c2 = pc[64], c3 = pc[96];
    if (form == 0) {
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
                     "{%0, %1, %2, %3};"
                     : "+d"(c0), "+d"(c1), "+d"(c2), "+d"(c3) : "d"(pa[0]), "d"(pa[32]), "d"(pb[0]));
    } else if (form == 1) {
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};"
                     : "+d"(c0), "+d"(c1), "+d"(c2), "+d"(c3)
                     : "d"(pa[0]), "d"(pa[32]), "d"(pa[64]), "d"(pa[96]), "d"(pb[0]), "d"(pb[32]));
    } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
                     "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};"
                     : "+d"(c0), "+d"(c1), "+d"(c2), "+d"(c3)
                     : "d"(pa[0]), "d"(pa[32]), "d"(pa[64]), "d"(pa[96]), "d"(pa[128]), "d"(pa[160]),
                       "d"(pa[192]), "d"(pa[224]), "d"(pb[0]), "d"(pb[32]), "d"(pb[64]), "d"(pb[96]));
    }
    double* pd = d + warp * 4 * 32 + lane;
    pd[0] = c0, pd[32] = c1, pd[64] = c2, pd[96] = c3;
}
#endif

// A warp-level f16 GEMM tile 16x8xK from row-major A (16 x K) and row-major B (K x 8) in global memory: staged to
// shared memory, fragments through ldmatrix.x4 (A) and ldmatrix.x2.trans (B), K/16 chained mma.sync, f16 result.
extern "C" __global__ void mma_ldmatrix_f16(const __half* A, const __half* B, __half* D, int K)
{
    extern __shared__ __align__(16) __half sm[];
    __half* sa = sm;           // 16 x K
    __half* sb = sm + 16 * K;  // K x 8
    const __half* a = A + blockIdx.x * 16 * K;
    const __half* b = B + blockIdx.x * K * 8;
    int lane = threadIdx.x;
    for (int j = lane; j < 16 * K; j += 32) sa[j] = a[j];
    for (int j = lane; j < K * 8; j += 32) sb[j] = b[j];
    __syncwarp();
    unsigned d0 = 0, d1 = 0;
    for (int k0 = 0; k0 < K; k0 += 16) {
        unsigned a0, a1, a2, a3, b0, b1;
        // x4: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15)
        int r = lane & 15, kk = k0 + ((lane >> 4) << 3);
        unsigned pa = (unsigned)__cvta_generic_to_shared(sa + r * K + kk);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(pa));
        unsigned pb = (unsigned)__cvta_generic_to_shared(sb + (k0 + (lane & 15)) * 8);
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(b0), "=r"(b1) : "r"(pb));
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, "
                     "{%0, %1};"
                     : "+r"(d0), "+r"(d1)
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    unsigned* out = reinterpret_cast<unsigned*>(D + blockIdx.x * 128);
    int g = lane >> 2, t = lane & 3;
    out[g * 4 + t] = d0;        // row g, cols 2t, 2t+1
    out[(g + 8) * 4 + t] = d1;  // row g+8
}

// Hopper wgmma on one warpgroup (sm_90a only): each CTA copies its shared-memory image (operand bytes already laid
// out as the descriptors name them) from global memory, then runs one `form`: several chained wgmma k-steps into
// accumulators loaded from C, D stored per thread as [CTA][register][thread]. scale_d = 0 makes the first step
// ignore C. The forms cover what the H100 truth's kernels did not: A from registers, the 64- and 128-byte swizzles
// (k-steps 32 bytes apart inside a swizzle span), the no-swizzle layout both ways round (core matrices stacked
// along K, or along M / N), MN-major operands (imm-trans = 1), N of 16 to 256, imm-scale = -1 and scale-d = 0.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TCF_WG_BF16_RA(A, B, S, SA, SB)                                                                             \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %13, 0; wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {"    \
                 "%0, %1, %2, %3, %4, %5, %6, %7"                                                                   \
                 "}, {%8, %9, %10, %11}, %12, p, " SA ", " SB ", 0; }"                                              \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])   \
                 : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "l"(B), "r"(S) : "memory")
#define TCF_WG_E4E5_SS(A, B, S, SA, SB)                                                                             \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %10, 0; wgmma.mma_async.sync.aligned.m64n32k32.f16.e4m3.e5m2 {"    \
                 "%0, %1, %2, %3, %4, %5, %6, %7"                                                                   \
                 "}, %8, %9, p, " SA ", " SB "; }"                                                                  \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])   \
                 : "l"(A), "l"(B), "r"(S) : "memory")
#define TCF_WG_F16_SS(A, B, S, SA, SB)                                                                              \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %22, 0; wgmma.mma_async.sync.aligned.m64n40k16.f32.f16.f16 {"      \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19"         \
                 "}, %20, %21, p, " SA ", " SB ", 0, 0; }"                                                          \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),  \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),         \
                   "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19])                                  \
                 : "l"(A), "l"(B), "r"(S) : "memory")
#define TCF_WG_E4_SS(A, B, S, SA, SB)                                                                               \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %66, 0; wgmma.mma_async.sync.aligned.m64n256k32.f16.e4m3.e4m3 {"   \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "  \
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "  \
                 "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "  \
                 "%59, %60, %61, %62, %63"                                                                          \
                 "}, %64, %65, p, " SA ", " SB "; }"                                                                \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),  \
                   "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]),         \
                   "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]),       \
                   "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]),       \
                   "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]),       \
                   "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]),       \
                   "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]), "+r"(d[49]),       \
                   "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), "+r"(d[56]),       \
                   "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])        \
                 : "l"(A), "l"(B), "r"(S) : "memory")

#define TCF_WG_F16_MN(A, B, S, SA, SB)                                                                              \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %34, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"      \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "  \
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"                                            \
                 "}, %32, %33, p, " SA ", " SB ", 1, 1; }"                                                          \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),  \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),         \
                   "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),       \
                   "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),       \
                   "+f"(d[29]), "+f"(d[30]), "+f"(d[31])                                                            \
                 : "l"(A), "l"(B), "r"(S) : "memory")

// elect.sync: in warp w the lanes of masks[w] elect a leader; each stores the leader's lane and its own predicate,
// the other lanes ~0 (the PTX ISA promises only a deterministic choice).
extern "C" __global__ void elect_lanes(const unsigned* masks, unsigned* leader, unsigned* elected)
{
    const unsigned lane = threadIdx.x & 31, warp = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const unsigned mask = masks[warp];
    unsigned who = ~0u, me = ~0u;
    if ((mask >> lane) & 1u)
        asm volatile("{ .reg .pred p; elect.sync %0|p, %2; selp.u32 %1, 1, 0, p; }" : "=r"(who), "=r"(me) : "r"(mask));
    leader[warp * 32 + lane] = who;
    elected[warp * 32 + lane] = me;
}

// cvt to tf32 (sm_90 forms): rna, rna.satfinite, rn and rz of each f32 word, 4 results per word.
extern "C" __global__ void tf32_cvt(const unsigned* x, unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned v = x[i], r0, r1, r2, r3;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r0) : "r"(v));
    asm("cvt.rna.satfinite.tf32.f32 %0, %1;" : "=r"(r1) : "r"(v));
    asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r2) : "r"(v));
    asm("cvt.rz.tf32.f32 %0, %1;" : "=r"(r3) : "r"(v));
    out[4 * i] = r0, out[4 * i + 1] = r1, out[4 * i + 2] = r2, out[4 * i + 3] = r3;
}

// a shared-memory matrix descriptor: start, leading and stride byte offsets, swizzle code (1: 128 B, 2: 64 B, 0: none)
__device__ __forceinline__ unsigned long long wg_desc(unsigned addr, unsigned lbo, unsigned sbo, unsigned swz)
{
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32) | ((unsigned long long)swz << 62);
}
__device__ __forceinline__ void wg_in(float& x, unsigned w) { x = __uint_as_float(w); }
__device__ __forceinline__ void wg_in(unsigned& x, unsigned w) { x = w; }
__device__ __forceinline__ unsigned wg_out(float x) { return __float_as_uint(x); }
__device__ __forceinline__ unsigned wg_out(unsigned x) { return x; }
__device__ __forceinline__ void wg_keep(float& x) { asm volatile("" : "+f"(x)::"memory"); }
__device__ __forceinline__ void wg_keep(unsigned& x) { asm volatile("" : "+r"(x)::"memory"); }

template <typename V, int R> __device__ __forceinline__ void wg_load(V (&d)[R], const unsigned* c)
{
#pragma unroll
    for (int r = 0; r < R; ++r) wg_in(d[r], c[(blockIdx.x * R + r) * 128 + threadIdx.x]);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
template <typename V, int R> __device__ __forceinline__ void wg_store(V (&d)[R], unsigned* out)
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
    for (int r = 0; r < R; ++r) wg_keep(d[r]);
#pragma unroll
    for (int r = 0; r < R; ++r) out[(blockIdx.x * R + r) * 128 + threadIdx.x] = wg_out(d[r]);
}

#define TCF_WG_TF32_SS(A, B, S, SA, SB)                                                                             \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %18, 0; wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {"     \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"                             \
                 "}, %16, %17, p, " SA ", " SB "; }"                                                                \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),  \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),         \
                   "+f"(d[15])                                                                                      \
                 : "l"(A), "l"(B), "r"(S) : "memory")
#define TCF_WG_TF32_RA(A, B, S, SA, SB)                                                                             \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %13, 0; wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {"     \
                 "%0, %1, %2, %3, %4, %5, %6, %7"                                                                   \
                 "}, {%8, %9, %10, %11}, %12, p, " SA ", " SB "; }"                                                 \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])   \
                 : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "l"(B), "r"(S) : "memory")

#define TCF_WG_INT_SS(TYPES, A, B, S)                                                                              \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %34, 0; wgmma.mma_async.sync.aligned.m64n64k32." TYPES " {"      \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "                                                \
                 "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "                                      \
                 "%24, %25, %26, %27, %28, %29, %30, %31"                                                            \
                 "}, %32, %33, p; }"                                                                                 \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]),               \
                   "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]),           \
                   "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]),        \
                   "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]),        \
                   "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])                                                \
                 : "l"(A), "l"(B), "r"(S) : "memory")

extern "C" __global__ void __launch_bounds__(128) wgmma_forms(const uint4* img, int img_bytes, const unsigned* areg,
                                                              const unsigned* c, unsigned* out, int form,
                                                              int scale_d)
{
    __shared__ __align__(1024) uint4 sm[40960 / 16];
    for (int i = threadIdx.x; i < img_bytes / 16; i += 128) sm[i] = img[blockIdx.x * (img_bytes / 16) + i];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // generic-proxy writes, read by the async proxy
    __syncthreads();
    const unsigned s = (unsigned)__cvta_generic_to_shared(sm);
    if (form == 0) {  // bf16 -> f32 m64n16k16, A from registers (4 steps), B 16 rows x 128 B, 128-byte swizzle
        float d[8];
        unsigned a[4][4];
        for (int k = 0; k < 4; ++k)
            for (int r = 0; r < 4; ++r) a[k][r] = areg[((blockIdx.x * 4 + k) * 4 + r) * 128 + threadIdx.x];
        wg_load(d, c);
        TCF_WG_BF16_RA(a[0], wg_desc(s, 16, 1024, 1), scale_d, "1", "1");
        TCF_WG_BF16_RA(a[1], wg_desc(s + 32, 16, 1024, 1), 1, "-1", "1");
        TCF_WG_BF16_RA(a[2], wg_desc(s + 64, 16, 1024, 1), 1, "1", "-1");
        TCF_WG_BF16_RA(a[3], wg_desc(s + 96, 16, 1024, 1), 1, "-1", "-1");
        wg_store(d, out);
    } else if (form == 1) {  // e4m3 x e5m2 -> f16 m64n32k32, no swizzle: A 64 x 64 B with core matrices stacked
                             // along M (LBO 1024, SBO 128), B 32 x 64 B at 4096 stacked along K (LBO 128, SBO 512)
        unsigned d[8];
        wg_load(d, c);
        TCF_WG_E4E5_SS(wg_desc(s, 1024, 128, 0), wg_desc(s + 4096, 128, 512, 0), scale_d, "1", "1");
        TCF_WG_E4E5_SS(wg_desc(s + 2048, 1024, 128, 0), wg_desc(s + 4096 + 256, 128, 512, 0), 1, "1", "-1");
        wg_store(d, out);
    } else if (form == 2) {  // f16 -> f32 m64n40k16: A 64 x 128 B, 128-byte swizzle; B two K slabs of 40 x 64 B at
                             // 8192 and 10752, 64-byte swizzle (SBO 512)
        float d[20];
        wg_load(d, c);
        TCF_WG_F16_SS(wg_desc(s, 16, 1024, 1), wg_desc(s + 8192, 16, 512, 2), scale_d, "1", "1");
        TCF_WG_F16_SS(wg_desc(s + 32, 16, 1024, 1), wg_desc(s + 8192 + 32, 16, 512, 2), 1, "-1", "1");
        TCF_WG_F16_SS(wg_desc(s + 64, 16, 1024, 1), wg_desc(s + 10752, 16, 512, 2), 1, "1", "1");
        TCF_WG_F16_SS(wg_desc(s + 96, 16, 1024, 1), wg_desc(s + 10752 + 32, 16, 512, 2), 1, "1", "-1");
        wg_store(d, out);
    } else if (form == 4) {  // f16 -> f32 m64n64k16, both MN-major (imm-trans 1): A no swizzle (M blocks of 8 at
                             // SBO 128, k-blocks at LBO 1024); B at 4096, 64-byte swizzle (32 columns of N per k-row,
                             // the second 32 at LBO 2048, k-blocks at SBO 512); 2 steps of 16 k
        float d[32];
        wg_load(d, c);
        TCF_WG_F16_MN(wg_desc(s, 1024, 128, 0), wg_desc(s + 4096, 2048, 512, 2), scale_d, "1", "1");
        TCF_WG_F16_MN(wg_desc(s + 2048, 1024, 128, 0), wg_desc(s + 4096 + 1024, 2048, 512, 2), 1, "-1", "1");
        wg_store(d, out);
    } else if (form == 5 || form == 6) {  // s8 x s8 -> s32 (5) and u8 x s8 -> s32 .satfinite (6) m64n64k32: A 64 x
                                          // 128 B and B 64 x 128 B at 8192, both 128-byte swizzle, 4 steps
        unsigned d[32];
        wg_load(d, c);
        for (int k = 0; k < 4; ++k) {
            const unsigned long long da = wg_desc(s + 32 * k, 16, 1024, 1), db = wg_desc(s + 8192 + 32 * k, 16, 1024, 1);
            const int sd = k == 0 ? scale_d : 1;
            if (form == 5) TCF_WG_INT_SS("s32.s8.s8", da, db, sd);
            else TCF_WG_INT_SS("s32.u8.s8.satfinite", da, db, sd);
        }
        wg_store(d, out);
    } else if (form == 7) {  // tf32 -> f32 m64n32k8: A 64 x 128 B and B 32 x 128 B at 8192, both 128-byte swizzle,
                             // 4 steps
        float d[16];
        wg_load(d, c);
        TCF_WG_TF32_SS(wg_desc(s, 16, 1024, 1), wg_desc(s + 8192, 16, 1024, 1), scale_d, "1", "1");
        TCF_WG_TF32_SS(wg_desc(s + 32, 16, 1024, 1), wg_desc(s + 8192 + 32, 16, 1024, 1), 1, "-1", "1");
        TCF_WG_TF32_SS(wg_desc(s + 64, 16, 1024, 1), wg_desc(s + 8192 + 64, 16, 1024, 1), 1, "1", "-1");
        TCF_WG_TF32_SS(wg_desc(s + 96, 16, 1024, 1), wg_desc(s + 8192 + 96, 16, 1024, 1), 1, "-1", "-1");
        wg_store(d, out);
    } else if (form == 8) {  // tf32 -> f32 m64n16k8, A from registers (2 steps); B 16 x 64 B, 64-byte swizzle
        float d[8];
        unsigned a[2][4];
        for (int k = 0; k < 2; ++k)
            for (int r = 0; r < 4; ++r) a[k][r] = areg[((blockIdx.x * 2 + k) * 4 + r) * 128 + threadIdx.x];
        wg_load(d, c);
        TCF_WG_TF32_RA(a[0], wg_desc(s, 16, 512, 2), scale_d, "1", "1");
        TCF_WG_TF32_RA(a[1], wg_desc(s + 32, 16, 512, 2), 1, "-1", "1");
        wg_store(d, out);
    } else {  // e4m3 -> f16 m64n256k32: A 64 x 128 B and B 256 x 128 B at 8192, both 128-byte swizzle, 4 steps
        unsigned d[64];
        wg_load(d, c);
        TCF_WG_E4_SS(wg_desc(s, 16, 1024, 1), wg_desc(s + 8192, 16, 1024, 1), scale_d, "1", "1");
        TCF_WG_E4_SS(wg_desc(s + 32, 16, 1024, 1), wg_desc(s + 8192 + 32, 16, 1024, 1), 1, "1", "1");
        TCF_WG_E4_SS(wg_desc(s + 64, 16, 1024, 1), wg_desc(s + 8192 + 64, 16, 1024, 1), 1, "-1", "1");
        TCF_WG_E4_SS(wg_desc(s + 96, 16, 1024, 1), wg_desc(s + 8192 + 96, 16, 1024, 1), 1, "1", "1");
        wg_store(d, out);
    }
}

// Sparse wgmma (wgmma.mma_async.sp, 2:4 A; 1:2 tf32) on one warpgroup, N = 32: the compressed A (64 x 32 bytes)
// from the image or registers, B 32 rows x 64 bytes of K, each step's metadata word per thread from
// meta[CTA][step][thread], its selector an immediate. Forms (tools/corpus/wgmma.py, WG_SP_FORMS): 0 f16 -> f32
// (A, B 128-byte swizzle; selector 0, then 1 with -A on B's second 64 bytes); 1 bf16 -> f32, A from registers, B
// without swizzle, selector 1; 2 e4m3 x e5m2 -> f32 k64, 64-byte swizzles, two B slabs; 3 tf32 -> f32 k16,
// selectors 0 and 1; 4 u8 x s8 -> s32 .satfinite k64, B without swizzle; 5 f16 -> f16, B MN-major (64-byte
// swizzle); 6-8 probes (f16 selector 1, e4m3, tf32) on 128-byte swizzles.
#define TCF_SP_REGS16 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define TCF_SP_SS(FORM, SEL, A, B, E, S, TAIL)                                                                      \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %19, 0; wgmma.mma_async.sp.sync.aligned." FORM " {" TCF_SP_REGS16 \
                 "}, %16, %17, %18, " SEL ", p" TAIL "; }"                                                          \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),  \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),         \
                   "+f"(d[15])                                                                                      \
                 : "l"(A), "l"(B), "r"(E), "r"(S) : "memory")
#define TCF_SP_INT_SS(FORM, SEL, A, B, E, S)                                                                        \
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %19, 0; wgmma.mma_async.sp.sync.aligned." FORM " {" TCF_SP_REGS16 \
                 "}, %16, %17, %18, " SEL ", p; }"                                                                  \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),  \
                   "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]),         \
                   "+r"(d[15])                                                                                      \
                 : "l"(A), "l"(B), "r"(E), "r"(S) : "memory")

extern "C" __global__ void __launch_bounds__(128) wgmma_sp_forms(const uint4* img, int img_bytes,
                                                                 const unsigned* areg, const unsigned* meta,
                                                                 const unsigned* c, unsigned* out, int form,
                                                                 int scale_d)
{
    __shared__ __align__(1024) uint4 sm[12288 / 16];
    for (int i = threadIdx.x; i < img_bytes / 16; i += 128) sm[i] = img[blockIdx.x * (img_bytes / 16) + i];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    const unsigned s = (unsigned)__cvta_generic_to_shared(sm);
    const int steps = (form == 0 || form == 2 || form == 3) ? 2 : 1;
    const unsigned e0 = meta[(blockIdx.x * steps) * 128 + threadIdx.x];
    const unsigned e1 = meta[(blockIdx.x * steps + steps - 1) * 128 + threadIdx.x];
    if (form == 4) {
        unsigned d[16];
        wg_load(d, c);
        TCF_SP_INT_SS("m64n32k64.s32.u8.s8.satfinite", "0", wg_desc(s, 16, 1024, 1), wg_desc(s + 8192, 128, 512, 0),
                      e0, scale_d);
        wg_store(d, out);
    } else if (form == 5) {
        unsigned d[8];
        wg_load(d, c);
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %11, 0; wgmma.mma_async.sp.sync.aligned.m64n32k32.f16.f16.f16 {"
                     "%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, %10, 0, p, 1, 1, 0, 1; }"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
                     : "l"(wg_desc(s, 16, 1024, 1)), "l"(wg_desc(s + 8192, 2048, 512, 2)), "r"(e0), "r"(scale_d)
                     : "memory");
        wg_store(d, out);
    } else if (form == 1) {
        float d[16];
        unsigned a[4];
        for (int r = 0; r < 4; ++r) a[r] = areg[(blockIdx.x * 4 + r) * 128 + threadIdx.x];
        wg_load(d, c);
        asm volatile("{ .reg .pred p; setp.ne.b32 p, %22, 0; wgmma.mma_async.sp.sync.aligned.m64n32k32.f32.bf16.bf16 "
                     "{" TCF_SP_REGS16 "}, {%16, %17, %18, %19}, %20, %21, 1, p, 1, -1, 0; }"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                       "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
                       "+f"(d[14]), "+f"(d[15])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(wg_desc(s, 128, 512, 0)), "r"(e0),
                       "r"(scale_d)
                     : "memory");
        wg_store(d, out);
    } else {
        float d[16];
        const unsigned long long a0 = wg_desc(s, 16, 1024, 1), b0 = wg_desc(s + 8192, 16, 1024, 1);
        wg_load(d, c);
        if (form == 0) {
            TCF_SP_SS("m64n32k32.f32.f16.f16", "0", a0, b0, e0, scale_d, ", 1, 1, 0, 0");
            TCF_SP_SS("m64n32k32.f32.f16.f16", "1", wg_desc(s + 32, 16, 1024, 1), wg_desc(s + 8192 + 64, 16, 1024, 1),
                      e1, 1, ", -1, 1, 0, 0");
        } else if (form == 2) {
            TCF_SP_SS("m64n32k64.f32.e4m3.e5m2", "0", wg_desc(s, 16, 512, 2), wg_desc(s + 4096, 16, 512, 2), e0,
                      scale_d, ", 1, 1");
            TCF_SP_SS("m64n32k64.f32.e4m3.e5m2", "0", wg_desc(s + 32, 16, 512, 2), wg_desc(s + 6144, 16, 512, 2), e1,
                      1, ", 1, -1");
        } else if (form == 3) {
            TCF_SP_SS("m64n32k16.f32.tf32.tf32", "0", a0, b0, e0, scale_d, ", 1, -1");
            TCF_SP_SS("m64n32k16.f32.tf32.tf32", "1", wg_desc(s + 32, 16, 1024, 1),
                      wg_desc(s + 8192 + 64, 16, 1024, 1), e1, 1, ", -1, -1");
        } else if (form == 6) {
            TCF_SP_SS("m64n32k32.f32.f16.f16", "1", a0, b0, e0, scale_d, ", 1, 1, 0, 0");
        } else if (form == 7) {
            TCF_SP_SS("m64n32k64.f32.e4m3.e4m3", "0", a0, b0, e0, scale_d, ", 1, 1");
        } else {
            TCF_SP_SS("m64n32k16.f32.tf32.tf32", "0", a0, b0, e0, scale_d, ", 1, 1");
        }
        wg_store(d, out);
    }
}

// The swizzle phase of a tile off the 1024-byte pattern: wgmma m64n8k16 f16 -> f32 (D from zero) with A 64 x 32 B in
// 128-byte swizzle rows at the 1024-aligned start and B 8 x 32 B in swizzle rows of 128 (swz 1), 64 (2) or 32 (3)
// bytes at 8192 + 384 (SBO 8 rows; phase 3, 3 and 1 of patterns repeating every 1024, 512 and 256 bytes), whose
// descriptor carries `base` in its base-offset field (bits 49-51); the image is each CTA's 16 KB of shared memory
__device__ __forceinline__ void wg_base_offset_probe(const uint4* img, int img_bytes, unsigned* out, int base, int swz)
{
    __shared__ __align__(1024) uint4 sm[16384 / 16];
    for (int i = threadIdx.x; i < img_bytes / 16; i += 128) sm[i] = img[blockIdx.x * (img_bytes / 16) + i];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    const unsigned s = (unsigned)__cvta_generic_to_shared(sm), width = 256u >> swz;
    const unsigned long long da = wg_desc(s, 16, 1024, 1);
    const unsigned long long db = wg_desc(s + 8192 + 384, 16, 8 * width, swz) | ((unsigned long long)(base & 7) << 49);
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %6, 0; wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 "
                 "{%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0; }"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "l"(da), "l"(db), "r"(0) : "memory");
    wg_store(d, out);
}
extern "C" __global__ void __launch_bounds__(128) wgmma_base_offset(const uint4* img, int img_bytes, unsigned* out,
                                                                    int base)
{
    wg_base_offset_probe(img, img_bytes, out, base, 1);
}
extern "C" __global__ void __launch_bounds__(128) wgmma_base_offset_sw(const uint4* img, int img_bytes, unsigned* out,
                                                                       int base, int swz)
{
    wg_base_offset_probe(img, img_bytes, out, base, swz);
}
#endif

// Sparse mma.sp::ordered_metadata (2:4 A), one tile per warp: A 2 or 4 words per lane (the compressed tile in the
// dense layout of half its K), B 2 or 4, C and D 4 (f16 C: 2), metadata one word per lane, fragments
// [warp][register][lane]. `form`: 0-2 f16 m16n8k16 -> f32 with selector 0 / 1 / 2; 3-4 f16 m16n8k32 -> f32, selector
// 0 / 1; 5 bf16 m16n8k32 -> f32, selector 1; 6 f16 m16n8k32 -> f16; 7 e4m3 m16n8k64 -> f32; 8 s8 m16n8k32 -> s32;
// 9 s8 m16n8k64 -> s32; 10 e5m2 x e4m3 m16n8k64 -> f32 (sm_90 has no FP8 mma.sp to f16); 11 u8 x s8 m16n8k32 -> s32
// .satfinite; 12 tf32 m16n8k8, selector 0; 13 tf32 m16n8k16, selector 1; 14 s4 m16n8k64, selector 1; 15 u4 x s4
// m16n8k128 .satfinite.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define TCF_SP_A2B2C4(SHAPE, SEL)                                                                                     \
    asm volatile("mma.sp::ordered_metadata.sync.aligned." SHAPE " {%0, %1, %2, %3}, {%4, %5}, {%6, %7}, "             \
                 "{%0, %1, %2, %3}, %8, " SEL ";"                                                                      \
                 : "+r"(r[0]), "+r"(r[1]), "+r"(r[2]), "+r"(r[3]) : "r"(pa[0]), "r"(pa[32]), "r"(pb[0]), "r"(pb[32]),  \
                   "r"(meta))
#define TCF_SP_A4B4C4(SHAPE, SEL)                                                                                     \
    asm volatile("mma.sp::ordered_metadata.sync.aligned." SHAPE " {%0, %1, %2, %3}, {%4, %5, %6, %7}, "               \
                 "{%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, " SEL ";"                                                 \
                 : "+r"(r[0]), "+r"(r[1]), "+r"(r[2]), "+r"(r[3])                                                     \
                 : "r"(pa[0]), "r"(pa[32]), "r"(pa[64]), "r"(pa[96]), "r"(pb[0]), "r"(pb[32]), "r"(pb[64]),           \
                   "r"(pb[96]), "r"(meta))
extern "C" __global__ void mma_sp_special(const unsigned* a, const unsigned* b, const unsigned* c, const unsigned* e,
                                          unsigned* d, int form)
{
    int lane = threadIdx.x & 31, warp = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const unsigned *pa = a + warp * 4 * 32 + lane, *pb = b + warp * 4 * 32 + lane, *pc = c + warp * 4 * 32 + lane;
    unsigned meta = e[warp * 32 + lane], r[4] = {pc[0], pc[32], pc[64], pc[96]};
    switch (form) {
    case 0: TCF_SP_A2B2C4("m16n8k16.row.col.f32.f16.f16.f32", "0"); break;
    case 1: TCF_SP_A2B2C4("m16n8k16.row.col.f32.f16.f16.f32", "1"); break;
    case 2: TCF_SP_A2B2C4("m16n8k16.row.col.f32.f16.f16.f32", "2"); break;
    case 3: TCF_SP_A4B4C4("m16n8k32.row.col.f32.f16.f16.f32", "0"); break;
    case 4: TCF_SP_A4B4C4("m16n8k32.row.col.f32.f16.f16.f32", "1"); break;
    case 5: TCF_SP_A4B4C4("m16n8k32.row.col.f32.bf16.bf16.f32", "1"); break;
    case 6:
        asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16 {%0, %1}, "
                     "{%2, %3, %4, %5}, {%6, %7, %8, %9}, {%0, %1}, %10, 0;"
                     : "+r"(r[0]), "+r"(r[1])
                     : "r"(pa[0]), "r"(pa[32]), "r"(pa[64]), "r"(pa[96]), "r"(pb[0]), "r"(pb[32]), "r"(pb[64]),
                       "r"(pb[96]), "r"(meta));
        break;
    case 7: TCF_SP_A4B4C4("m16n8k64.row.col.f32.e4m3.e4m3.f32", "0"); break;
    case 8: TCF_SP_A2B2C4("m16n8k32.row.col.s32.s8.s8.s32", "0"); break;
    case 9: TCF_SP_A4B4C4("m16n8k64.row.col.s32.s8.s8.s32", "0"); break;
    case 10: TCF_SP_A4B4C4("m16n8k64.row.col.f32.e5m2.e4m3.f32", "0"); break;
    case 11: TCF_SP_A2B2C4("m16n8k32.row.col.satfinite.s32.u8.s8.s32", "1"); break;
    case 12: TCF_SP_A2B2C4("m16n8k8.row.col.f32.tf32.tf32.f32", "0"); break;
    case 13: TCF_SP_A4B4C4("m16n8k16.row.col.f32.tf32.tf32.f32", "1"); break;
    case 14: TCF_SP_A2B2C4("m16n8k64.row.col.s32.s4.s4.s32", "1"); break;
    default: TCF_SP_A4B4C4("m16n8k128.row.col.satfinite.s32.u4.s4.s32", "0"); break;
    }
    unsigned* pd = d + warp * 4 * 32 + lane;
    pd[0] = r[0], pd[32] = r[1], pd[64] = r[2], pd[96] = r[3];
}
#endif

// mbarrier steps: lane 0 of warp w runs script w (pairs op, value) on its own barrier and records after each step
// test_wait.parity 0 and 1, the pending count of the last arrive's state, and test_wait on that state (~0 until an
// arrive has returned one: a zero word is no state, and the H100 reads a pending count of 2^20 from it). Ops: 0 init
// (count), 1 arrive with count, 2 arrive.expect_tx (bytes), 3 expect_tx, 4 complete_tx, 5 arrive_drop (count).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
extern "C" __global__ void mbarrier_steps(const unsigned* prog, unsigned* out, int steps)
{
    __shared__ alignas(8) unsigned long long bars[32];
    if ((threadIdx.x & 31) != 0) return;
    const unsigned w = threadIdx.x >> 5, a = static_cast<unsigned>(__cvta_generic_to_shared(&bars[w]));
    const unsigned *p = prog + (blockIdx.x * (blockDim.x >> 5) + w) * steps * 2;
    unsigned* o = out + (blockIdx.x * (blockDim.x >> 5) + w) * steps * 4;
    unsigned long long state = 0;
    for (int i = 0; i < steps; ++i) {
        const unsigned op = p[2 * i], v = p[2 * i + 1];
        switch (op) {
        case 0: asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(v) : "memory"); break;
        case 1: asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], %2;" : "=l"(state) : "r"(a), "r"(v) : "memory");
            break;
        case 2: asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;" : "=l"(state) : "r"(a), "r"(v)
                             : "memory"); break;
        case 3: asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(v) : "memory");
            break;
        case 4: asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(v) : "memory");
            break;
        default: asm volatile("mbarrier.arrive_drop.shared::cta.b64 %0, [%1], %2;" : "=l"(state) : "r"(a), "r"(v)
                              : "memory"); break;
        }
        unsigned p0, p1, pend, ps;
        asm volatile("{ .reg .pred q; mbarrier.test_wait.parity.shared::cta.b64 q, [%1], 0; selp.u32 %0, 1, 0, q; }"
                     : "=r"(p0) : "r"(a) : "memory");
        asm volatile("{ .reg .pred q; mbarrier.test_wait.parity.shared::cta.b64 q, [%1], 1; selp.u32 %0, 1, 0, q; }"
                     : "=r"(p1) : "r"(a) : "memory");
        asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(pend) : "l"(state));
        asm volatile("{ .reg .pred q; mbarrier.test_wait.shared::cta.b64 q, [%1], %2; selp.u32 %0, 1, 0, q; }"
                     : "=r"(ps) : "r"(a), "l"(state) : "memory");
        const bool have = state != 0;
        o[4 * i] = p0, o[4 * i + 1] = p1, o[4 * i + 2] = have ? pend : ~0u, o[4 * i + 3] = have ? ps : ~0u;
    }
}
#endif

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#include "tcforge/mbarrier.cuh"
#include "tcforge/tma.cuh"

// an mbarrier for one arrival, initialised by thread 0 and visible to the CTA (and the async proxy) on return
__device__ __forceinline__ unsigned one_shot_barrier(unsigned long long* bar)
{
    const unsigned m = static_cast<unsigned>(__cvta_generic_to_shared(bar));
    if (threadIdx.x == 0) {
        tcf::mbarrier_init(m, 1);
        tcf::fence_mbarrier_init_release_cluster();
    }
    __syncthreads();
    return m;
}

// Every thread copies its 16-byte chunks of `bytes` from global memory into shared memory `s`, visible to the async
// proxy after the barrier; returns `s`'s shared address.
__device__ __forceinline__ unsigned stage_for_bulk(uint4* s, const uint4* src, unsigned bytes)
{
    for (unsigned i = threadIdx.x; i < bytes / 16; i += blockDim.x) s[i] = src[i];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    return static_cast<unsigned>(__cvta_generic_to_shared(s));
}
__device__ __forceinline__ void bulk_group_wait()
{
    tcf::cp_async_bulk_commit_group();
    tcf::cp_async_bulk_wait_group<0>();
}
#endif

// TMA round trip: thread 0 loads the box at (x, y) of map_in into 1024-byte-aligned shared memory (completing on an
// mbarrier the other threads wait on), every thread copies the box's 8 KB to `dump` in shared-memory order (the
// swizzle and the zero fill in view), then thread 0 stores the box at (y, x) of map_out (in-bounds elements only).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
extern "C" __global__ void tma_box(const __grid_constant__ CUtensorMap map_in, const __grid_constant__ CUtensorMap map_out,
                                   uint4* dump, int x, int y, unsigned box_bytes)
{
    __shared__ alignas(1024) uint4 box[512];
    __shared__ alignas(8) unsigned long long bar;
    const unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(box));
    const unsigned m = one_shot_barrier(&bar);
    if (threadIdx.x == 0) {
        tcf::mbarrier_arrive_expect_tx(m, box_bytes);
        tcf::cp_async_bulk_tensor_2d_g2s(b, reinterpret_cast<const tcf::TmaDesc*>(&map_in), x, y, m);
    }
    tcf::mbarrier_wait_parity(m, 0);
    for (unsigned i = threadIdx.x; i < 512; i += blockDim.x) dump[i] = box[i];
    if (threadIdx.x == 0) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        tcf::cp_async_bulk_tensor_2d_s2g(reinterpret_cast<const tcf::TmaDesc*>(&map_out), y, x, b);
        bulk_group_wait();
    }
}
#endif

// TMA im2col: thread 0 of CTA i loads the im2col box at args[8 i ..] (the rank's coordinates C first, then its rank - 2
// im2col offsets W first) into 1024-byte-aligned shared memory; every thread copies its box_bytes to dump's i-th box.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
template <int R>
__device__ __forceinline__ void tma_im2col(const CUtensorMap& map, const int* args, uint4* dump, unsigned box_bytes)
{
    __shared__ alignas(1024) uint4 box[1024];
    __shared__ alignas(8) unsigned long long bar;
    const unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(box));
    const unsigned m = one_shot_barrier(&bar);
    const int* a = args + 8 * blockIdx.x;
    if (threadIdx.x == 0) {
        tcf::mbarrier_arrive_expect_tx(m, box_bytes);
        const void* tm = &map;
        if constexpr (R == 3)
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4}], [%5], {%6};"
                         ::"r"(b), "l"(tm), "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(m), "h"((uint16_t)a[3]) : "memory");
        else if constexpr (R == 4)
            asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
                         ::"r"(b), "l"(tm), "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(m), "h"((uint16_t)a[4]),
                         "h"((uint16_t)a[5]) : "memory");
        else
            asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4, %5, %6}], [%7], {%8, %9, %10};"
                         ::"r"(b), "l"(tm), "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(a[4]), "r"(m),
                         "h"((uint16_t)a[5]), "h"((uint16_t)a[6]), "h"((uint16_t)a[7]) : "memory");
    }
    tcf::mbarrier_wait_parity(m, 0);
    for (unsigned i = threadIdx.x; i < box_bytes / 16; i += blockDim.x) dump[blockIdx.x * (box_bytes / 16) + i] = box[i];
}
extern "C" __global__ void tma_im2col3(const __grid_constant__ CUtensorMap map, const int* args, uint4* dump,
                                       unsigned box_bytes) { tma_im2col<3>(map, args, dump, box_bytes); }
extern "C" __global__ void tma_im2col4(const __grid_constant__ CUtensorMap map, const int* args, uint4* dump,
                                       unsigned box_bytes) { tma_im2col<4>(map, args, dump, box_bytes); }
extern "C" __global__ void tma_im2col5(const __grid_constant__ CUtensorMap map, const int* args, uint4* dump,
                                       unsigned box_bytes) { tma_im2col<5>(map, args, dump, box_bytes); }
#endif

// A tensor map edited on the device: warp 0 copies the map parameter into shared memory (or zeros, f[0] = 1, as
// Triton's device-side descriptors start), lane 0 replaces every field (address src2, dims f[1..2], row stride f[3],
// box f[4..5]; PTX elemtype code E, swizzle_mode S, fill_mode F: immediates, as ptxas requires), the warp publishes
// it to `work`, and thread 0 loads the box at (x, y) through it; every thread dumps the 16 KB box buffer. The wait is
// bounded: status[0] = 1 when the box's f[9] bytes arrived, 0 when they did not (a wrong count cannot hang the GPU).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
template <int E, int S, int F>
__device__ __forceinline__ void tma_replace(const CUtensorMap& tmpl, uint4* work, const void* src2, const unsigned* f,
                                            uint4* dump, unsigned* status, int x, int y)
{
    __shared__ alignas(1024) uint4 box[1024];
    __shared__ alignas(128) uint4 tm[8];
    __shared__ alignas(8) unsigned long long bar;
    const unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(box));
    const unsigned t = static_cast<unsigned>(__cvta_generic_to_shared(tm));
    for (unsigned i = threadIdx.x; i < 1024; i += blockDim.x) box[i] = make_uint4(0xABABABAB, 0, 0, 0xABABABAB);
    if (threadIdx.x < 8)
        tm[threadIdx.x] = f[0] ? make_uint4(0, 0, 0, 0) : reinterpret_cast<const uint4*>(&tmpl)[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile(
            "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;\n"
            "tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], 1;\n"
            "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 0, %2;\n"
            "tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %3;\n"
            "tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %4;\n"
            "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, %5;\n"
            "tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 1, %6;\n"
            "tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 0, 1;\n"
            "tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], 1, 1;\n"
            "tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], %7;\n"
            "tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%0], 0;\n"
            "tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], %8;\n"
            "tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], %9;\n"
            ::"r"(t), "l"(src2), "r"(f[1]), "r"(f[2]), "l"(static_cast<unsigned long long>(f[3])), "r"(f[4]),
            "r"(f[5]), "n"(E), "n"(S), "n"(F) : "memory");
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        asm volatile(
            "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;\n"
            "fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(work), "r"(t) : "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    const unsigned m = one_shot_barrier(&bar);
    if (threadIdx.x == 0) {
        tcf::mbarrier_arrive_expect_tx(m, f[9]);
        tcf::cp_async_bulk_tensor_2d_g2s(b, reinterpret_cast<const tcf::TmaDesc*>(work), x, y, m);
    }
    unsigned done = 0;
    for (int i = 0; i < (1 << 20) && !done; ++i)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\nselp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done) : "r"(m) : "memory");
    if (threadIdx.x == 0) status[0] = done;
    for (unsigned i = threadIdx.x; i < 1024; i += blockDim.x) dump[i] = box[i];
}
#define TMA_REPLACE(NAME, E, S, F)                                                                               \
    extern "C" __global__ void NAME(const __grid_constant__ CUtensorMap tmpl, uint4* work, const void* src2,     \
                                    const unsigned* f, uint4* dump, unsigned* status, int x, int y)              \
    {                                                                                                             \
        tma_replace<E, S, F>(tmpl, work, src2, f, dump, status, x, y);                                            \
    }
TMA_REPLACE(tma_replace_f32_sw32, 7, 1, 0)     // f32, 32-byte swizzle, zero fill
TMA_REPLACE(tma_replace_f32_sw32_nan, 7, 1, 1) // the same with NaN fill
TMA_REPLACE(tma_replace_bf16_sw128, 10, 3, 0)  // code 10: bf16 in the PTX table (f32.ftz in CUtensorMapDataType)
TMA_REPLACE(tma_replace_f64_sw64, 9, 2, 0)     // code 9: f64 in the PTX table (bf16 in CUtensorMapDataType)
TMA_REPLACE(tma_replace_u8_none, 0, 0, 0)      // u8, no swizzle
#endif

// The half-precision MUFU approximations over inputs x (16-bit patterns; all 65536 make the table a model can be built
// from): out0 = {tanh.approx.f16, ex2.approx.f16, tanh.approx.bf16, ex2.approx.ftz.bf16} of x, out1 the same ops'
// .x2 forms on the pair {x, y} (low half x).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
extern "C" __global__ void mufu16(const unsigned short* x, const unsigned short* y, uint4* out0, uint4* out1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned short a = x[i], r0, r1, r2, r3;
    unsigned p = a | (unsigned(y[i]) << 16), q0, q1, q2, q3;
    asm("tanh.approx.f16 %0, %1;" : "=h"(r0) : "h"(a));
    asm("ex2.approx.f16 %0, %1;" : "=h"(r1) : "h"(a));
    asm("tanh.approx.bf16 %0, %1;" : "=h"(r2) : "h"(a));
    asm("ex2.approx.ftz.bf16 %0, %1;" : "=h"(r3) : "h"(a));
    asm("tanh.approx.f16x2 %0, %1;" : "=r"(q0) : "r"(p));
    asm("ex2.approx.f16x2 %0, %1;" : "=r"(q1) : "r"(p));
    asm("tanh.approx.bf16x2 %0, %1;" : "=r"(q2) : "r"(p));
    asm("ex2.approx.ftz.bf16x2 %0, %1;" : "=r"(q3) : "r"(p));
    out0[i] = make_uint4(r0, r1, r2, r3);
    out1[i] = make_uint4(q0, q1, q2, q3);
}
#endif

// set in its forms (and add.u16x2): each thread compares its words x[2i], x[2i+1] as s32, u32, f32 (with .ftz and a
// predicate combined by .and / .xor) and as f16x2 / bf16x2 pairs, writing out[8i .. 8i+7].
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
extern "C" __global__ void set_forms(const unsigned* x, uint4* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = x[2 * i], b = x[2 * i + 1], r[8];
    asm("set.lt.u32.s32 %0, %1, %2;" : "=r"(r[0]) : "r"(a), "r"(b));
    asm("{.reg .pred p; setp.ne.u32 p, %1, 0; set.ge.and.f32.u32 %0, %1, %2, p;}" : "=r"(r[1]) : "r"(a), "r"(b));
    asm("set.gtu.ftz.s32.f32 %0, %1, %2;" : "=r"(r[2]) : "f"(__uint_as_float(a)), "f"(__uint_as_float(b)));
    asm("{.reg .pred p; setp.lt.s32 p, %1, 0; set.num.xor.f32.f32 %0, %1, %2, !p;}"
        : "=r"(r[3]) : "r"(a), "r"(b));
    asm("set.eq.f16x2.f16x2 %0, %1, %2;" : "=r"(r[4]) : "r"(a), "r"(b));
    asm("set.neu.u32.f16x2 %0, %1, %2;" : "=r"(r[5]) : "r"(a), "r"(b));
    asm("set.le.bf16x2.bf16x2 %0, %1, %2;" : "=r"(r[6]) : "r"(a), "r"(b));
    asm("add.u16x2 %0, %1, %2;" : "=r"(r[7]) : "r"(a), "r"(b));
    out[2 * i] = make_uint4(r[0], r[1], r[2], r[3]);
    out[2 * i + 1] = make_uint4(r[4], r[5], r[6], r[7]);
}
#endif

// fns over word triples {mask, base, offset} of w, and isspacep of a global, a local, a shared and a parameter
// address (bits 0-3: global, local, shared, param of the global pointer; 4-7 of the local; 8-11 of the shared;
// 12-15 of the parameter's), into out[2i], out[2i+1].
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned spaces(const void* p)
{
    unsigned r;
    asm("{.reg .pred g, l, s, q; isspacep.global g, %1; isspacep.local l, %1; isspacep.shared s, %1;"
        " isspacep.param q, %1; selp.u32 %0, 1, 0, g; @l or.b32 %0, %0, 2; @s or.b32 %0, %0, 4;"
        " @q or.b32 %0, %0, 8;}" : "=r"(r) : "l"(p));
    return r;
}
extern "C" __global__ void fns_spaces(const uint4* w, unsigned* out, const __grid_constant__ int4 q, int n)
{
    __shared__ unsigned sm[128];
    unsigned loc[4];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint4 t = w[i];
    unsigned d;
    asm("fns.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(t.x), "r"(t.y), "r"(t.z));
    loc[i & 3] = d;
    sm[threadIdx.x] = d;
    out[2 * i] = d;
    out[2 * i + 1] = spaces(w) | spaces(loc) << 4 | spaces(sm) << 8 | spaces(&q) << 12 | (loc[i & 3] == sm[threadIdx.x]) << 16;
}
#endif

// The saturating integer packs: each thread packs its words x[3i], x[3i+1] (s32) with x[3i+2] as c into out[4i..].
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
extern "C" __global__ void int_packs(const int* x, uint4* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = x[3 * i], b = x[3 * i + 1], c = x[3 * i + 2];
    uint4 r;
    asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;" : "=r"(r.x) : "r"(a), "r"(b), "r"(c));
    asm("cvt.pack.sat.s16.s32 %0, %1, %2;" : "=r"(r.y) : "r"(a), "r"(b));
    asm("cvt.pack.sat.s4.s32.b32 %0, %1, %2, %3;" : "=r"(r.z) : "r"(a), "r"(b), "r"(c));
    asm("cvt.pack.sat.u2.s32.b32 %0, %1, %2, %3;" : "=r"(r.w) : "r"(a), "r"(b), "r"(c));
    out[i] = r;
}
#endif

// The SIMD video instructions: each thread runs the 16 forms of VIDEO_FORMS (tools/corpus/entries.py, same order)
// on its words a = x[3i], b = x[3i+1], c = x[3i+2], into out[16i .. 16i+15].
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define VIDEO(k, form) asm(form " %0, %1, %2, %3;" : "=r"(r[k]) : "r"(a), "r"(b), "r"(c))
#define VIDEO_SEL(k, form, dm, as, bs) asm(form " %0" dm ", %1" as ", %2" bs ", %3;" : "=r"(r[k]) : "r"(a), "r"(b), "r"(c))
extern "C" __global__ void video_forms(const unsigned* x, uint4* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = x[3 * i], b = x[3 * i + 1], c = x[3 * i + 2], r[16];
    VIDEO(0, "vabsdiff4.u32.u32.u32");
    VIDEO(1, "vadd4.s32.s32.s32.sat");
    VIDEO(2, "vsub4.u32.u32.u32.sat");
    VIDEO(3, "vavrg4.s32.s32.s32");
    VIDEO(4, "vmin4.s32.u32.s32");
    VIDEO(5, "vmax4.u32.s32.u32.sat");
    VIDEO_SEL(6, "vabsdiff4.s32.s32.s32.add", ".b20", "", "");
    VIDEO_SEL(7, "vadd4.u32.u32.u32", ".b31", ".b0123", ".b4567");
    VIDEO(8, "vset4.s32.s32.lt");
    VIDEO(9, "vset4.u32.u32.ge.add");
    VIDEO(10, "vabsdiff2.u32.u32.u32.add");
    VIDEO(11, "vadd2.s32.s32.s32.sat");
    VIDEO_SEL(12, "vavrg2.u32.u32.u32", ".h1", ".h23", ".h01");
    VIDEO(13, "vmin2.s32.s32.s32");
    VIDEO(14, "vset2.s32.u32.ne");
    VIDEO(15, "vsub2.s32.s32.s32.add");
    for (int k = 0; k < 4; ++k) out[4 * i + k] = make_uint4(r[4 * k], r[4 * k + 1], r[4 * k + 2], r[4 * k + 3]);
}
#undef VIDEO

// The scalar video instructions (each thread: one {a, b, c} triple through 32 forms): byte / half-word selectors,
// .sat, secondary .add / .min / .max, destination-part merges, shifts with .clamp / .wrap, vset, and vmad with negated
// operands, .po and .shr7 / .shr15.
#define SV3(k, form, as, bs) asm(form " %0, %1" as ", %2" bs ";" : "=r"(r[k]) : "r"(a), "r"(b))
#define SV4(k, form, ds, as, bs) asm(form " %0" ds ", %1" as ", %2" bs ", %3;" : "=r"(r[k]) : "r"(a), "r"(b), "r"(c))
#define SVN(k, form, na, nb, nc) asm(form " %0, " na "%1, " nb "%2, " nc "%3;" : "=r"(r[k]) : "r"(a), "r"(b), "r"(c))
extern "C" __global__ void video_scalar(const unsigned* x, uint4* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = x[3 * i], b = x[3 * i + 1], c = x[3 * i + 2], r[32];
    SV3(0, "vadd.s32.s32.s32", "", "");
    SV3(1, "vadd.u32.u32.u32.sat", "", "");
    SV3(2, "vadd.s32.u32.s32.sat", "", "");
    SV3(3, "vadd.s32.u32.s32.sat", ".b0", ".h1");
    SV4(4, "vsub.s32.s32.s32.sat.add", "", "", "");
    SV4(5, "vsub.u32.u32.u32.min", "", "", "");
    SV4(6, "vsub.u32.s32.u32.sat", ".b2", ".h0", ".b3");
    SV4(7, "vabsdiff.s32.s32.s32.sat", ".h0", ".b0", ".b2");
    SV4(8, "vabsdiff.u32.u32.u32.add", "", "", "");
    SV3(9, "vmin.s32.s32.u32", ".h1", ".h0");
    SV4(10, "vmin.s32.s32.s32.sat.max", "", "", "");
    SV4(11, "vmax.u32.u32.s32.sat", ".h1", ".b1", ".b3");
    SV4(12, "vmax.s32.u32.u32.sat.add", "", "", "");
    SV3(13, "vshl.u32.u32.u32.clamp", "", "");
    SV3(14, "vshl.s32.s32.u32.sat.clamp", "", "");
    SV3(15, "vshl.u32.s32.u32.wrap", ".b1", ".b0");
    SV4(16, "vshl.s32.u32.u32.sat.wrap", ".b1", ".h0", ".b2");
    SV3(17, "vshr.s32.s32.u32.clamp", "", "");
    SV3(18, "vshr.u32.u32.u32.wrap", ".h1", ".b3");
    SV4(19, "vshr.s32.s32.u32.wrap.min", "", "", "");
    SV3(20, "vset.s32.u32.lt", "", "");
    SV3(21, "vset.u32.u32.ne", ".b1", ".b1");
    SV4(22, "vset.s32.s32.ge.add", "", "", "");
    SV4(23, "vset.u32.s32.gt", ".b3", ".h0", "");
    SV4(24, "vmad.u32.u32.u32", "", "", "");
    SV4(25, "vmad.s32.s32.s32.sat", "", "", "");
    SV4(26, "vmad.s32.s32.u32.shr15", "", ".h0", ".h1");
    SV4(27, "vmad.u32.u32.u32.po.shr7", "", "", "");
    SVN(28, "vmad.s32.u32.u32", "-", "", "");
    SVN(29, "vmad.s32.s32.s32.sat", "", "-", "");
    SVN(30, "vmad.s32.u32.u32.sat.shr7", "", "", "-");
    SVN(31, "vmad.s32.s32.s32.shr15", "-", "-", "");
    for (int k = 0; k < 8; ++k) out[8 * i + k] = make_uint4(r[4 * k], r[4 * k + 1], r[4 * k + 2], r[4 * k + 3]);
}
#undef SV3
#undef SV4
#undef SVN
#undef VIDEO_SEL
#endif

// The warp-level matrix API: one warp per 16-row band multiplies A (16 x 64, row-major) by B (64 x 16, column-major)
// in four k16 steps from C (f16 -> f32), stores D; the same for s8 -> s32 (satfinite) and for tf32 m16n16k8 over
// K = 32.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
namespace wmma = nvcuda::wmma;
extern "C" __global__ void wmma_f16(const half* a, const half* b, const float* c, float* d)
{
    const int band = blockIdx.x;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::load_matrix_sync(fc, c + band * 256, 16, wmma::mem_row_major);
    for (int k = 0; k < 64; k += 16) {
        wmma::load_matrix_sync(fa, a + band * 16 * 64 + k, 64);
        wmma::load_matrix_sync(fb, b + k, 64);
        wmma::mma_sync(fc, fa, fb, fc);
    }
    wmma::store_matrix_sync(d + band * 256, fc, 16, wmma::mem_col_major);
}
extern "C" __global__ void wmma_s8(const signed char* a, const signed char* b, const int* c, int* d)
{
    const int band = blockIdx.x;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> fc;
    wmma::load_matrix_sync(fc, c + band * 256, 16, wmma::mem_row_major);
    for (int k = 0; k < 64; k += 16) {
        wmma::load_matrix_sync(fa, a + band * 16 * 64 + k, 64);
        wmma::load_matrix_sync(fb, b + k, 64);
        wmma::mma_sync(fc, fa, fb, fc, true);
    }
    wmma::store_matrix_sync(d + band * 256, fc, 16, wmma::mem_row_major);
}
extern "C" __global__ void wmma_tf32(const float* a, const float* b, const float* c, float* d)
{
    const int band = blockIdx.x;
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
    wmma::load_matrix_sync(fc, c + band * 256, 16, wmma::mem_row_major);
    for (int k = 0; k < 32; k += 8) {
        wmma::load_matrix_sync(fa, a + band * 16 * 32 + k, 32);
        wmma::load_matrix_sync(fb, b + k, 32);
        for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
        for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
        wmma::mma_sync(fc, fa, fb, fc);
    }
    wmma::store_matrix_sync(d + band * 256, fc, 16, wmma::mem_row_major);
}

#endif
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900  // the layout probes run on sm_90a only
// Where each matrix element sits in a wmma fragment (the PTX ISA leaves it unspecified): block b takes one
// (operand, shape, type, layout) in the order of wmma_map's switch. A and B fragments are loaded from two random
// matrices (leading dimension WMMA_LD elements, WMMA_SRC elements apart) and their words dumped lane by lane;
// accumulators are loaded with the row- and the column-major memory layout and dumped, then filled from random
// words and stored both ways.
#define WMMA_LD 48
#define WMMA_SRC 2048
template <class Frag>
__device__ void wmma_dump(const Frag& f, unsigned* out)
{
    constexpr int words = (sizeof(f.x) + 3) / 4;
    unsigned w[words] = {};
    memcpy(w, f.x, sizeof(f.x));
    for (int i = 0; i < words; ++i) out[i * 32 + threadIdx.x] = w[i];
}
template <class Use, int M, int N, int K, class Ty, class Ly, class El>
__device__ void wmma_map_ab(const void* src, unsigned* out)
{
    wmma::fragment<Use, M, N, K, Ty, Ly> f;
    for (int pass = 0; pass < 2; ++pass) {
        wmma::load_matrix_sync(f, static_cast<const El*>(src) + pass * WMMA_SRC, WMMA_LD);
        wmma_dump(f, out + pass * 512);
    }
}
template <int M, int N, int K, class Ty>
__device__ void wmma_map_acc(const void* src, const unsigned* fill, unsigned* out, unsigned* mat)
{
    wmma::fragment<wmma::accumulator, M, N, K, Ty> f;
    wmma::load_matrix_sync(f, static_cast<const Ty*>(src), WMMA_LD, wmma::mem_row_major);
    wmma_dump(f, out);
    wmma::load_matrix_sync(f, static_cast<const Ty*>(src) + WMMA_SRC, WMMA_LD, wmma::mem_col_major);
    wmma_dump(f, out + 512);
    unsigned w[(sizeof(f.x) + 3) / 4];
    for (int i = 0; i < int(sizeof(w) / 4); ++i) w[i] = fill[i * 32 + threadIdx.x];
    memcpy(f.x, w, sizeof(f.x));
    wmma::store_matrix_sync(reinterpret_cast<Ty*>(mat), f, WMMA_LD, wmma::mem_row_major);
    wmma::store_matrix_sync(reinterpret_cast<Ty*>(mat) + WMMA_SRC, f, WMMA_LD, wmma::mem_col_major);
}
using wmma::matrix_a;
using wmma::matrix_b;
using wmma::row_major;
using wmma::col_major;
using tf32 = wmma::precision::tf32;
using s8 = signed char;
using u8 = unsigned char;
using bf16 = __nv_bfloat16;
// blocks 0-51: A / B per type (f16, bf16, s8, u8: row-major a, b in the three shapes, then column-major), then
// tf32 m16n16k8 (a, b; row, col); blocks 52-61: accumulators (f32 in the three shapes and m16n16k8, f16 and s32 in
// the three shapes)
#define AB_SHAPES(base, Ty, Ly) \
    case base: wmma_map_ab<matrix_a, 16, 16, 16, Ty, Ly, Ty>(src, o); break; \
    case base + 1: wmma_map_ab<matrix_b, 16, 16, 16, Ty, Ly, Ty>(src, o); break; \
    case base + 2: wmma_map_ab<matrix_a, 32, 8, 16, Ty, Ly, Ty>(src, o); break; \
    case base + 3: wmma_map_ab<matrix_b, 32, 8, 16, Ty, Ly, Ty>(src, o); break; \
    case base + 4: wmma_map_ab<matrix_a, 8, 32, 16, Ty, Ly, Ty>(src, o); break; \
    case base + 5: wmma_map_ab<matrix_b, 8, 32, 16, Ty, Ly, Ty>(src, o); break;
#define ACC(base, Ty) \
    case base: wmma_map_acc<16, 16, 16, Ty>(src, fill, o, m); break; \
    case base + 1: wmma_map_acc<32, 8, 16, Ty>(src, fill, o, m); break; \
    case base + 2: wmma_map_acc<8, 32, 16, Ty>(src, fill, o, m); break;
extern "C" __global__ void wmma_map(const unsigned* src, const unsigned* fill, unsigned* out, unsigned* mat)
{
    unsigned* o = out + blockIdx.x * 1024;
    unsigned* m = mat + (blockIdx.x >= 52 ? blockIdx.x - 52 : 0) * 2 * WMMA_SRC;
    switch (blockIdx.x) {
        AB_SHAPES(0, half, row_major) AB_SHAPES(6, half, col_major)
        AB_SHAPES(12, bf16, row_major) AB_SHAPES(18, bf16, col_major)
        AB_SHAPES(24, s8, row_major) AB_SHAPES(30, s8, col_major)
        AB_SHAPES(36, u8, row_major) AB_SHAPES(42, u8, col_major)
        case 48: wmma_map_ab<matrix_a, 16, 16, 8, tf32, row_major, float>(src, o); break;
        case 49: wmma_map_ab<matrix_b, 16, 16, 8, tf32, row_major, float>(src, o); break;
        case 50: wmma_map_ab<matrix_a, 16, 16, 8, tf32, col_major, float>(src, o); break;
        case 51: wmma_map_ab<matrix_b, 16, 16, 8, tf32, col_major, float>(src, o); break;
        ACC(52, float)
        case 55: wmma_map_acc<16, 16, 8, float>(src, fill, o, m); break;
        ACC(56, half) ACC(59, int)
        default: break;
    }
}
#undef AB_SHAPES
#undef ACC

// Which copy of an element a wmma.mma reads, where an f16 fragment holds each element more than once: block b
// loads A (row-major) and B (column-major) of one shape (b / 16: m16n16k16, m32n8k16, m8n32k16), zeroes fragment
// register b % 8 of A (b % 16 < 8) or of B, and multiplies from a zero C into f32.
template <int M, int N, int K>
__device__ void wmma_copy_probe(const half* a, const half* b, int which, int reg, float* d)
{
    wmma::fragment<matrix_a, M, N, K, half, row_major> fa;
    wmma::fragment<matrix_b, M, N, K, half, col_major> fb;
    wmma::fragment<wmma::accumulator, M, N, K, float> fc;
    wmma::load_matrix_sync(fa, a, K);
    wmma::load_matrix_sync(fb, b, K);
    wmma::fill_fragment(fc, 0.0f);
    if (which == 0) fa.x[2 * reg] = fa.x[2 * reg + 1] = __float2half(0.0f);
    else fb.x[2 * reg] = fb.x[2 * reg + 1] = __float2half(0.0f);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(d, fc, N, wmma::mem_row_major);
}
extern "C" __global__ void wmma_copies(const half* a, const half* b, float* d)
{
    const int shape = blockIdx.x / 16, which = blockIdx.x % 16 / 8, reg = blockIdx.x % 8;
    d += blockIdx.x * 256;
    if (shape == 0) wmma_copy_probe<16, 16, 16>(a, b, which, reg, d);
    else if (shape == 1) wmma_copy_probe<32, 8, 16>(a, b, which, reg, d);
    else wmma_copy_probe<8, 32, 16>(a, b, which, reg, d);
}

// The f64 and sub-byte wmma shapes. Blocks 0-7: m8n8k4 f64, D = C + A (8 x 16) B (16 x 8) in four k4 steps, block b
// rounding each step .rn / .rz / .rm / .rp (b % 4), A row-major and B column-major (b < 4) or the other way, C
// loaded row-major and D stored column-major where b is odd. Blocks 8-13: m8n8k32 s4 / u4 (satfinite, then
// wrapping) and m8n8k128 b1 (.xor.popc, .and.popc) over two k steps, A row-major and B column-major, leading
// dimension 16 bytes beyond the two steps and `odd` elements more (a part word, which the load cuts off). Each
// lane dumps its first A and B fragments and its last accumulator words to dump[block * 256 + word * 32 + lane].
#define WMMA_F64_MMA(al, bl, rnd)                                                                             \
    asm volatile("wmma.mma.sync.aligned." al "." bl ".m8n8k4.f64.f64.f64.f64." rnd " {%0, %1}, {%2}, {%3}, {%0, %1};" \
                 : "+d"(fc.x[0]), "+d"(fc.x[1]) : "d"(fa.x[0]), "d"(fb.x[0]))
template <class LA, class LB>
__device__ void wmma_f64_band(const double* a, const double* b, const double* c, double* d, unsigned* dump, int mode)
{
    constexpr bool a_row = std::is_same<LA, row_major>::value, b_row = std::is_same<LB, row_major>::value;
    wmma::fragment<matrix_a, 8, 8, 4, double, LA> fa;
    wmma::fragment<matrix_b, 8, 8, 4, double, LB> fb;
    wmma::fragment<wmma::accumulator, 8, 8, 4, double> fc;
    wmma::load_matrix_sync(fc, c, 8, blockIdx.x % 2 ? wmma::mem_row_major : wmma::mem_col_major);
    for (int k = 0; k < 16; k += 4) {
        wmma::load_matrix_sync(fa, a + (a_row ? k : k * 8), a_row ? 16 : 8);
        wmma::load_matrix_sync(fb, b + (b_row ? k * 8 : k), b_row ? 8 : 16);
        if (k == 0) {
            wmma_dump(fa, dump);
            wmma_dump(fb, dump + 64);
        }
        if (a_row) {
            if (mode == 0) WMMA_F64_MMA("row", "col", "rn");
            else if (mode == 1) WMMA_F64_MMA("row", "col", "rz");
            else if (mode == 2) WMMA_F64_MMA("row", "col", "rm");
            else WMMA_F64_MMA("row", "col", "rp");
        } else {
            if (mode == 0) WMMA_F64_MMA("col", "row", "rn");
            else if (mode == 1) WMMA_F64_MMA("col", "row", "rz");
            else if (mode == 2) WMMA_F64_MMA("col", "row", "rm");
            else WMMA_F64_MMA("col", "row", "rp");
        }
    }
    wmma_dump(fc, dump + 128);
    wmma::store_matrix_sync(d, fc, 8, blockIdx.x % 2 ? wmma::mem_col_major : wmma::mem_row_major);
}
#undef WMMA_F64_MMA
template <class Ty, int K>
__device__ void wmma_subbyte_band(const unsigned* a, const unsigned* b, const int* c, int* d, unsigned* dump,
                                  int form, unsigned odd)
{
    constexpr int bits = K == 32 ? 4 : 1;
    const unsigned ld = 2 * K + 128 / bits + odd;  // two k steps per row, 16 bytes of padding, `odd` elements more
    wmma::fragment<matrix_a, 8, 8, K, Ty, row_major> fa;
    wmma::fragment<matrix_b, 8, 8, K, Ty, col_major> fb;
    wmma::fragment<wmma::accumulator, 8, 8, K, int> fc;
    wmma::load_matrix_sync(fc, c, 8, wmma::mem_row_major);
    for (int step = 0; step < 2; ++step) {
        wmma::load_matrix_sync(fa, a + step * K * bits / 32, ld);
        wmma::load_matrix_sync(fb, b + step * K * bits / 32, ld);
        if (step == 0) {
            wmma_dump(fa, dump);
            wmma_dump(fb, dump + 32);
        }
        if constexpr (bits == 4) wmma::mma_sync(fc, fa, fb, fc, form == 0);
        else if (form == 0) wmma::bmma_sync(fc, fa, fb, fc, wmma::experimental::bmmaBitOpXOR);
        else wmma::bmma_sync(fc, fa, fb, fc, wmma::experimental::bmmaBitOpAND);
    }
    wmma_dump(fc, dump + 64);
    wmma::store_matrix_sync(d, fc, 8, wmma::mem_col_major);
}
extern "C" __global__ void wmma_more(const double* fa, const double* fb, const double* fc, double* fd,
                                     const unsigned* ia, const unsigned* ib, const int* ic, int* id, unsigned* dump,
                                     unsigned odd)
{
    namespace ex = wmma::experimental::precision;
    const int blk = blockIdx.x;
    dump += blk * 256;
    if (blk < 8) {
        fa += blk * 128, fb += blk * 128, fc += blk * 64, fd += blk * 64;
        if (blk < 4) wmma_f64_band<row_major, col_major>(fa, fb, fc, fd, dump, blk % 4);
        else wmma_f64_band<col_major, row_major>(fa, fb, fc, fd, dump, blk % 4);
        return;
    }
    const int i = blk - 8;
    ia += i * 96, ib += i * 96, ic += i * 64, id += i * 64;  // 8 rows (columns) of 48 bytes
    if (i < 2) wmma_subbyte_band<ex::s4, 32>(ia, ib, ic, id, dump, i, odd);
    else if (i < 4) wmma_subbyte_band<ex::u4, 32>(ia, ib, ic, id, dump, i - 2, odd);
    else wmma_subbyte_band<ex::b1, 128>(ia, ib, ic, id, dump, i - 4, odd);
}
#endif

// Bulk copies without a tensor map: thread 0 copies `bytes` bytes from src + off into shared memory (completing on
// an mbarrier the others wait on), then the shared bytes to dst + off2 (bulk group).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
extern "C" __global__ void bulk_copy(const uint4* src, uint4* dst, int off, int off2, unsigned bytes)
{
    __shared__ alignas(128) uint4 buf[256];
    __shared__ alignas(8) unsigned long long bar;
    const unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(buf));
    const unsigned m = one_shot_barrier(&bar);
    if (threadIdx.x == 0) {
        tcf::mbarrier_arrive_expect_tx(m, bytes);
        tcf::cp_async_bulk_g2s(b, src + off, bytes, m);
    }
    tcf::mbarrier_wait_parity(m, 0);
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + off2), "r"(b),
                     "r"(bytes) : "memory");
        bulk_group_wait();
    }
}
#endif

// Textures and surfaces through bindless handles. Each sample reads its coordinates as 4 words of c (float or
// integer bits as the instruction takes them: {x, y, z, layer}) and writes the 4 result words to out.
#define TEX_FLOAT_COORDS(NAME, INSTR, COORDS, RC)                                                                   \
    extern "C" __global__ void NAME(unsigned long long t, const uint4* c, uint4* out, int n)                   \
    {                                                                                                             \
        int i = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (i >= n) return;                                                                                       \
        uint4 q = c[i], r;                                                                                        \
        asm volatile(INSTR " {%0, %1, %2, %3}, [%4, " COORDS "];"                                              \
                     : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)                                                 \
                     : "l"(t), RC(q.x), RC(q.y), RC(q.z), "r"(q.w));                                              \
        out[i] = r;                                                                                               \
    }
#define AS_F(v) "f"(__uint_as_float(v))
#define AS_R(v) "r"(v)
TEX_FLOAT_COORDS(tex1d_ff, "tex.1d.v4.f32.f32", "{%5}", AS_F)
TEX_FLOAT_COORDS(tex2d_ff, "tex.2d.v4.f32.f32", "{%5, %6}", AS_F)
TEX_FLOAT_COORDS(tex3d_ff, "tex.3d.v4.f32.f32", "{%5, %6, %7, %7}", AS_F)
TEX_FLOAT_COORDS(texa2d_ff, "tex.a2d.v4.f32.f32", "{%8, %5, %6, %6}", AS_F)
TEX_FLOAT_COORDS(tex2d_fi, "tex.2d.v4.f32.s32", "{%5, %6}", AS_R)
TEX_FLOAT_COORDS(tex2d_sf, "tex.2d.v4.s32.f32", "{%5, %6}", AS_F)
TEX_FLOAT_COORDS(tex2d_uf, "tex.2d.v4.u32.f32", "{%5, %6}", AS_F)
TEX_FLOAT_COORDS(tex2d_si, "tex.2d.v4.s32.s32", "{%5, %6}", AS_R)
TEX_FLOAT_COORDS(tld4r_2d, "tld4.r.2d.v4.f32.f32", "{%5, %6}", AS_F)
TEX_FLOAT_COORDS(tld4a_2d, "tld4.a.2d.v4.f32.f32", "{%5, %6}", AS_F)

// txq and suq answers of one texture and one surface, 8 words each.
extern "C" __global__ void image_queries(unsigned long long t, unsigned long long s, unsigned* out)
{
    unsigned v[12];
    asm volatile("txq.width.b32 %0, [%8]; txq.height.b32 %1, [%8]; txq.depth.b32 %2, [%8];"
                 "txq.normalized_coords.b32 %3, [%8]; txq.filter_mode.b32 %4, [%8]; txq.addr_mode_0.b32 %5, [%8];"
                 "txq.addr_mode_1.b32 %6, [%8]; txq.array_size.b32 %7, [%8];"
                 : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7])
                 : "l"(t));
    asm volatile("suq.width.b32 %0, [%4]; suq.height.b32 %1, [%4]; suq.depth.b32 %2, [%4];"
                 "suq.array_size.b32 %3, [%4];"
                 : "=r"(v[8]), "=r"(v[9]), "=r"(v[10]), "=r"(v[11]) : "l"(s));
    if (threadIdx.x == 0)
        for (int k = 0; k < 12; ++k) out[k] = v[k];
}

// Surface loads: each sample loads at {x (bytes), y} (3d: {x, y, z}; a2d: {layer, x, y}) into out's 4 words.
#define SULD(NAME, INSTR, DST, COORDS, ...)                                                                         \
    extern "C" __global__ void NAME(unsigned long long s, const int4* c, uint4* out, int n)                    \
    {                                                                                                             \
        int i = blockIdx.x * blockDim.x + threadIdx.x;                                                            \
        if (i >= n) return;                                                                                       \
        int4 q = c[i];                                                                                            \
        uint4 r = make_uint4(0, 0, 0, 0);                                                                         \
        unsigned short h0 = 0, h1 = 0;                                                                            \
        unsigned long long l0 = 0;                                                                                \
        asm volatile(INSTR " " DST ", [%4, " COORDS "];" : __VA_ARGS__ : "l"(s), "r"(q.x), "r"(q.y), "r"(q.z),     \
                     "r"(q.w));                                                                                   \
        out[i] = make_uint4(r.x | h0 | (unsigned(h1) << 16) | unsigned(l0), r.y | unsigned(l0 >> 32), r.z, r.w);  \
    }
SULD(suld2d_v4b32_trap, "suld.b.2d.v4.b32.trap", "{%0, %1, %2, %3}", "{%5, %6}", "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w))
SULD(suld2d_v4b32_clamp, "suld.b.2d.v4.b32.clamp", "{%0, %1, %2, %3}", "{%5, %6}", "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w))
SULD(suld2d_v4b32_zero, "suld.b.2d.v4.b32.zero", "{%0, %1, %2, %3}", "{%5, %6}", "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w))
// (operands the instruction does not write are "+" so that they keep their zeros)
SULD(suld2d_b8_clamp, "suld.b.2d.b8.clamp", "{%0}", "{%5, %6}", "=h"(h0), "+h"(h1), "+r"(r.z), "+r"(r.w))
SULD(suld2d_v2b16_zero, "suld.b.2d.v2.b16.zero", "{%0, %1}", "{%5, %6}", "=h"(h0), "=h"(h1), "+r"(r.z), "+r"(r.w))
SULD(suld3d_b64_clamp, "suld.b.3d.b64.clamp", "{%0}", "{%5, %6, %7, %7}", "=l"(l0), "+r"(r.y), "+r"(r.z), "+r"(r.w))
SULD(sulda2d_b32_zero, "suld.b.a2d.b32.zero", "{%0}", "{%8, %5, %6, %6}", "=r"(r.x), "+r"(r.y), "+r"(r.z), "+r"(r.w))

// Surface stores by one thread in sample order (a later store to the same place wins, as in the emulator's lane
// order): each sample stores its 4 value words v at {x, y} (x in bytes; sust.p: in samples).
#define SUST(NAME, INSTR, SRC)                                                                                      \
    extern "C" __global__ void NAME(unsigned long long s, const int4* c, const uint4* v, int n)                 \
    {                                                                                                             \
        if (blockIdx.x != 0 || threadIdx.x != 0) return;                                                          \
        for (int i = 0; i < n; ++i) {                                                                             \
            int4 q = c[i];                                                                                        \
            uint4 w = v[i];                                                                                       \
            asm volatile(INSTR " [%0, {%1, %2}], " SRC ";" ::"l"(s), "r"(q.x), "r"(q.y), "r"(w.x), "r"(w.y),      \
                         "r"(w.z), "r"(w.w), "h"((unsigned short)w.x), "h"((unsigned short)w.y) : "memory");     \
        }                                                                                                         \
    }
SUST(sust2d_b32_clamp, "sust.b.2d.b32.clamp", "{%3}")
SUST(sust2d_b32_zero, "sust.b.2d.b32.zero", "{%3}")
SUST(sust2d_v2b16_clamp, "sust.b.2d.v2.b16.clamp", "{%7, %8}")
SUST(sustp2d_v4_trap, "sust.p.2d.v4.b32.trap", "{%3, %4, %5, %6}")
SUST(sustp2d_v4_zero, "sust.p.2d.v4.b32.zero", "{%3, %4, %5, %6}")

// Surface reductions from every thread of the grid at once (the operations commute, so the order the GPU takes
// does not matter): sample i reduces its value v[i] into the word at {x, y} (x in bytes) or {x, y, z} of c[i].
#define SURED(NAME, INSTR, T, CON, COORDS)                                                                        \
    extern "C" __global__ void NAME(unsigned long long s, const int4* c, const T* v, int n)                    \
    {                                                                                                             \
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {                 \
            int4 q = c[i];                                                                                        \
            asm volatile(INSTR " [%0, " COORDS "], %4;" ::"l"(s), "r"(q.x), "r"(q.y), "r"(q.z), CON(v[i])         \
                         : "memory");                                                                             \
        }                                                                                                         \
    }
SURED(sured2d_add_u32_trap, "sured.b.add.2d.u32.trap", unsigned, "r", "{%1, %2}")
SURED(sured2d_min_s32_clamp, "sured.b.min.2d.s32.clamp", unsigned, "r", "{%1, %2}")
SURED(sured2d_max_u32_zero, "sured.b.max.2d.u32.zero", unsigned, "r", "{%1, %2}")
SURED(sured1d_and_b32_clamp, "sured.b.and.1d.b32.clamp", unsigned, "r", "{%1}")
SURED(sured2d_or_b32_zero, "sured.b.or.2d.b32.zero", unsigned, "r", "{%1, %2}")
SURED(sured3d_add_u64_trap, "sured.b.add.3d.u64.trap", unsigned long long, "l", "{%1, %2, %3, %3}")
SURED(sured2d_min_s64_clamp, "sured.b.min.2d.s64.clamp", unsigned long long, "l", "{%1, %2}")
SURED(sured2d_max_s64_zero, "sured.b.max.2d.s64.zero", unsigned long long, "l", "{%1, %2}")

// Bulk reductions: every thread copies its part of `src` (bytes, a multiple of 16) into shared memory; thread 0 then
// reduces that shared span element by element into the tensor of `map` at box (x, y) (TMA_REDUCE), or into
// dst + off (BULK_REDUCE), and waits for the bulk group.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define TMA_REDUCE(NAME, OP)                                                                                        \
    extern "C" __global__ void NAME(const __grid_constant__ CUtensorMap map, const uint4* src, int x, int y,      \
                                    unsigned bytes)                                                               \
    {                                                                                                             \
        __shared__ alignas(128) uint4 s[512];                                                                     \
        const unsigned a = stage_for_bulk(s, src, bytes);                                                         \
        if (threadIdx.x == 0) {                                                                                   \
            asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta." OP ".tile.bulk_group [%0, {%1, %2}], " \
                         "[%3];" ::"l"(&map), "r"(x), "r"(y), "r"(a) : "memory");                                  \
            bulk_group_wait();                                                                                    \
        }                                                                                                         \
    }
TMA_REDUCE(tma_reduce_add, "add")
TMA_REDUCE(tma_reduce_min, "min")
TMA_REDUCE(tma_reduce_max, "max")
TMA_REDUCE(tma_reduce_or, "or")

#define BULK_REDUCE(NAME, SUFFIX)                                                                                   \
    extern "C" __global__ void NAME(const uint4* src, uint4* dst, int off, unsigned bytes)                         \
    {                                                                                                             \
        __shared__ alignas(128) uint4 s[256];                                                                     \
        const unsigned a = stage_for_bulk(s, src, bytes);                                                         \
        if (threadIdx.x == 0) {                                                                                   \
            asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group." SUFFIX " [%0], [%1], %2;"          \
                         ::"l"(dst + off), "r"(a), "r"(bytes) : "memory");                                        \
            bulk_group_wait();                                                                                    \
        }                                                                                                         \
    }
BULK_REDUCE(bulk_reduce_add_f32, "add.f32")
BULK_REDUCE(bulk_reduce_add_f16, "add.noftz.f16")
BULK_REDUCE(bulk_reduce_min_s32, "min.s32")
BULK_REDUCE(bulk_reduce_inc_u32, "inc.u32")
BULK_REDUCE(bulk_reduce_xor_b64, "xor.b64")
#endif

// Dynamic stack allocation (`alloca` in device code, PTX alloca): each thread allocates a per-thread number of ints
// in a callee (freed at its return) and a byte buffer per loop round in the kernel (kept until it exits).
__device__ __noinline__ int alloca_fill(int m, int t)
{
    int* buf = static_cast<int*>(alloca(m * sizeof(int)));
    for (int i = 0; i < m; ++i) buf[i] = i * t + 1;
    int s = 0;
    for (int i = m - 1; i >= 0; --i) s = s * 3 + buf[i];
    return s;
}
extern "C" __global__ void alloca_sum(const int* n, int* out)
{
    const int t = threadIdx.x + blockIdx.x * blockDim.x;
    int s = 0;
    for (int r = 0; r < 3; ++r) {
        const int m = n[t] + r;
        char* tmp = static_cast<char*>(alloca(m));
        for (int i = 0; i < m; ++i) tmp[i] = static_cast<char>(i * 37 + r);
        s += alloca_fill(m, t) + tmp[m - 1];
    }
    out[t] = s;
}
