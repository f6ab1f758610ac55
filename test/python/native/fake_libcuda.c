/* A stand-in for libcuda.so.1 in tests (TILEWORK_LIBCUDA): cuLaunchKernel records its
   arguments, each parameter's 8 bytes included, instead of launching. */
#include <stdint.h>
#include <string.h>

static uint64_t rec[16 + 64]; /* f, grid[3], block[3], shared, stream, count, params... */
static int nparams, fail_code;

void fake_set_nparams(int n) { nparams = n; }
void fake_fail_next(int code) { fail_code = code; }
const uint64_t *fake_record(void) { return rec; }

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
    if (fail_code) {
        int c = fail_code;
        fail_code = 0;
        return c;
    }
    uint64_t head[9] = {(uintptr_t)f, gx, gy, gz, bx, by, bz, shared, (uintptr_t)stream};
    memcpy(rec, head, sizeof head);
    rec[9]++;
    for (int i = 0; i < nparams && i < 64; i++) memcpy(&rec[16 + i], params[i], 8);
    return 0;
}

int cuGetErrorName(int err, const char **name) {
    *name = err == 719 ? "CUDA_ERROR_LAUNCH_FAILED" : "CUDA_ERROR_UNKNOWN";
    return 0;
}
