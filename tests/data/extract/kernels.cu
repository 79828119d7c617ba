// Two small kernels (a SIMT axpy and a 16x16x16 wmma) that tools/make_extract_data.py builds into the extraction test data.
#include <mma.h>
extern "C" __global__ void axpy(float a, const float* x, float* y, int n){int i=blockIdx.x*blockDim.x+threadIdx.x; if(i<n) y[i]=a*x[i]+y[i];}
extern "C" __global__ void mma16(const __half* a, const __half* b, float* c){
  using namespace nvcuda::wmma;
  fragment<matrix_a,16,16,16,__half,row_major> fa; fragment<matrix_b,16,16,16,__half,col_major> fb; fragment<accumulator,16,16,16,float> fc;
  fill_fragment(fc,0.f); load_matrix_sync(fa,a,16); load_matrix_sync(fb,b,16); mma_sync(fc,fa,fb,fc); store_matrix_sync(c,fc,16,mem_row_major);}
int main() { return 0; }
