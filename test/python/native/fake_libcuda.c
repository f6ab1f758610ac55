/* A stand-in for libcuda.so.1 in tests (TILEWORK_LIBCUDA): cuLaunchKernel records its
   arguments, each parameter's 8 bytes included (or a packed `extra` buffer's bytes, its size in
   record[10]), instead of launching; cuLaunchKernelEx likewise, with record[11..14]: its
   attributes' count, the first one's id and 4-byte value, and 1 (record[14] is 0 for
   cuLaunchKernel). */
#include <stdint.h>
#include <string.h>

static uint64_t rec[16 + 64]; /* f, grid[3], block[3], shared, stream, count, params... */
static int nparams, fail_code;
static int map_from = 1 << 30;           /* parameters from here are 128-byte tensor maps */
static unsigned char maps[4][128];       /* their bytes, as launched */

void fake_set_nparams(int n) { nparams = n; }
void fake_set_map_params(int first) { map_from = first; }
const unsigned char *fake_map(int i) { return maps[i]; }
void fake_fail_next(int code) { fail_code = code; }
const uint64_t *fake_record(void) { return rec; }

/* (static: cuLaunchKernelEx records through it, not through a symbol another fake loaded
   first may provide) */
static int record_launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, unsigned shared, void *stream, void **params,
                         void **extra) {
    if (fail_code) {
        int c = fail_code;
        fail_code = 0;
        return c;
    }
    uint64_t head[9] = {(uintptr_t)f, gx, gy, gz, bx, by, bz, shared, (uintptr_t)stream};
    memcpy(rec, head, sizeof head);
    rec[9]++;
    rec[10] = rec[11] = rec[12] = rec[13] = rec[14] = 0;
    if (params) {
        for (int i = 0; i < nparams && i < 64; i++) memcpy(&rec[16 + i], params[i], 8);
        for (int i = map_from; i < nparams && i - map_from < 4; i++)
            memcpy(maps[i - map_from], params[i], 128);
    } else if (extra && extra[0] == (void *)1 && extra[2] == (void *)2 && !extra[4]) {
        size_t size = *(size_t *)extra[3]; /* BUFFER_POINTER, BUFFER_SIZE, END: the bytes */
        rec[10] = size;
        memcpy(&rec[16], extra[1], size < 64 * 8 ? size : 64 * 8);
    }
    return 0;
}

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
    return record_launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}

/* cuda.h's CUlaunchConfig and CUlaunchAttribute (the value union is 64 bytes) */
typedef struct {
    int id;
    char pad[4];
    union { char pad[64]; int cooperative; } value;
} Attr;
typedef struct {
    unsigned gx, gy, gz, bx, by, bz, shared;
    void *stream;
    Attr *attrs;
    unsigned num_attrs;
} Config;

int cuLaunchKernelEx(const Config *c, void *f, void **params, void **extra) {
    int r = record_launch(f, c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->shared, c->stream,
                          params, extra);
    if (r) return r;
    rec[11] = c->num_attrs;
    if (c->num_attrs) {
        rec[12] = (uint64_t)c->attrs[0].id;
        rec[13] = (uint64_t)(unsigned)c->attrs[0].value.cooperative;
    }
    rec[14] = 1;
    return 0;
}

/* (record[14] is 2: a bundle's generated C launcher launched cooperatively) */
int cuLaunchCooperativeKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shared, void *stream,
                              void **params) {
    int r = record_launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, 0);
    if (!r) rec[14] = 2;
    return r;
}

int cuGetErrorName(int err, const char **name) {
    *name = err == 719 ? "CUDA_ERROR_LAUNCH_FAILED" : "CUDA_ERROR_UNKNOWN";
    return 0;
}

/* what a generated C launcher (bundle_c.py) calls before launching */
static char fake_module, fake_function;
static uint64_t loaded_bytes;

int cuModuleLoadData(void **module, const void *image) {
    loaded_bytes = *(const uint64_t *)image; /* the binary's first 8 bytes */
    *module = &fake_module;
    return 0;
}
int cuModuleGetFunction(void **f, void *module, const char *name) {
    *f = &fake_function;
    return module == &fake_module ? 0 : 400;
}
int cuModuleUnload(void *module) { return 0; }
int cuFuncSetAttribute(void *f, int attribute, int value) { return 0; }
void *fake_function_handle(void) { return &fake_function; }

/* the thread's current context, as the test sets it */
static void *current_context;
void fake_set_context(void *c) { current_context = c; }
int cuCtxGetCurrent(void **c) {
    *c = current_context;
    return 0;
}
uint64_t fake_loaded_bytes(void) { return loaded_bytes; }
