/* Launches a bundle's add_kernel through its generated C launcher.  FAKE: against the fake
   driver, printing what cuLaunchKernel got; else on the GPU, checking out = x * 2.5 + y. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include LAUNCHER_H

#ifdef FAKE
const uint64_t *fake_record(void);
void fake_set_nparams(int n);
void *fake_function_handle(void);
uint64_t fake_loaded_bytes(void);

int main(void) {
    fake_set_nparams(5);
    CUresult r = LAUNCH((CUstream)0x77, 3, 2, 1, 0x1000, 0x2000, 0x3000, -1000, 2.5f);
    const uint64_t *rec = fake_record();
    printf("%d %d", r, rec[0] == (uint64_t)(uintptr_t)fake_function_handle());
    for (int i = 1; i < 10; i++) printf(" %llu", (unsigned long long)rec[i]);
    printf(" %llu\n", (unsigned long long)fake_loaded_bytes());
    for (int i = 0; i < 5; i++) printf("%016llx\n", (unsigned long long)rec[16 + i]);
    return 0;
}
#else
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
CUresult cuInit(unsigned flags);
CUresult cuDeviceGet(CUdevice *d, int ordinal);
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d);
CUresult cuCtxSetCurrent(CUcontext c);
CUresult cuCtxSynchronize(void);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes);

#define CHECK(x) do { CUresult r_ = (x); if (r_) { printf("%s: error %d\n", #x, r_); return 1; } } while (0)

int main(void) {
    enum { N = 100000 };
    static float x[N], y[N], out[N];
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr dx, dy, dout;
    for (int i = 0; i < N; i++) { x[i] = (float)(i % 97) - 40.0f; y[i] = (float)(i % 13); }
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuMemAlloc_v2(&dx, sizeof x));
    CHECK(cuMemAlloc_v2(&dy, sizeof y));
    CHECK(cuMemAlloc_v2(&dout, sizeof out));
    CHECK(cuMemcpyHtoD_v2(dx, x, sizeof x));
    CHECK(cuMemcpyHtoD_v2(dy, y, sizeof y));
    CHECK(LAUNCH(0, (N + 1023) / 1024, 1, 1, dx, dy, dout, N, 2.5f));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemcpyDtoH_v2(out, dout, sizeof out));
    for (int i = 0; i < N; i++)
        if (out[i] != x[i] * 2.5f + y[i]) { printf("mismatch at %d: %g\n", i, out[i]); return 1; }
    printf("OK\n");
    return 0;
}
#endif
