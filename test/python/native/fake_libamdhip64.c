/* A stand-in for libamdhip64.so in tests (TILEWORK_LIBAMDHIP): hipModuleLaunchKernel records
   its arguments and the packed argument buffer instead of launching. */
#include <stdint.h>
#include <string.h>

static uint64_t rec[16];   /* f, grid[3], block[3], shared, stream, count, size */
static unsigned char args[2048];
static int fail_code;

void fake_fail_next(int code) { fail_code = code; }
const uint64_t *fake_record(void) { return rec; }
const unsigned char *fake_args(void) { return args; }

int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, unsigned shared, void *stream,
                          void **params, void **extra) {
    if (fail_code) {
        int c = fail_code;
        fail_code = 0;
        return c;
    }
    uint64_t head[9] = {(uintptr_t)f, gx, gy, gz, bx, by, bz, shared, (uintptr_t)stream};
    memcpy(rec, head, sizeof head);
    rec[9]++;
    /* extra: {HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, END} */
    if (params || !extra || extra[0] != (void *)1 || extra[2] != (void *)2 || extra[4] != (void *)3)
        return 1;
    size_t size = *(size_t *)extra[3];
    rec[10] = size;
    memcpy(args, extra[1], size < sizeof args ? size : sizeof args);
    return 0;
}

const char *hipGetErrorName(int err) {
    return err == 719 ? "hipErrorLaunchFailure" : "hipErrorUnknown";
}
