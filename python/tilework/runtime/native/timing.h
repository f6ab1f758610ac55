/* The native launcher's opt-in timing build (-DTW_LAUNCH_TIMING; native_launch.py builds it
   under TILEWORK_NATIVE_TIMING=1): CLOCK_MONOTONIC deltas summed per phase of a launch, read by
   the module's `timings()` (ns per phase, `launches`, and `clock_ns`: what one clock read
   costs, which each measured phase includes once).  Without the macro the marks compile to
   nothing.  Included once, by launch.c. */

enum {
    PH_TOTAL,    /* the whole native call: a Launch's vectorcall, or Signature.launch */
    PH_BIND,     /* the generated binder (Launch only) */
    PH_GETDEV,   /* tensor.get_device(), every tensor argument */
    PH_DATAPTR,  /* tensor.data_ptr() */
    PH_DTYPE,    /* tensor.dtype */
    PH_KEY,      /* the pass over the arguments, the three above included */
    PH_LOOKUP,   /* the variant: fingerprint memo, key tuple, fn.cache lookup, .native */
    PH_GRID,     /* the grid (a callable's call included) */
    PH_DEVICE,   /* the current context (cuCtxGetCurrent) or device (torch's _cuda_getDevice) */
    PH_STREAM,   /* torch._C._cuda_getCurrentRawStream */
    PH_PACK,     /* packing the parameters */
    PH_DRIVER,   /* cuLaunchKernel (hipModuleLaunchKernel) itself */
    PH_COUNT
};

#ifdef TW_LAUNCH_TIMING
#include <time.h>

static const char *const PHASE_NAMES[PH_COUNT] = {
    "total", "bind", "get_device", "data_ptr", "dtype", "key", "lookup", "grid", "device",
    "stream", "pack", "driver"};

static uint64_t g_phase_ns[PH_COUNT];
static uint64_t g_launches;

static inline uint64_t tw_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
#define TW_TIMING 1
#define T_MARK(v) uint64_t v = tw_now()
#define T_ADD(ph, v) (g_phase_ns[ph] += tw_now() - (v))
#define T_COUNT() (g_launches++)
#else
#define TW_TIMING 0
#define T_MARK(v) ((void)0)
#define T_ADD(ph, v) ((void)0)
#define T_COUNT() ((void)0)
#endif

/* timings() -> {phase: ns summed, "launches": n, "clock_ns": one clock read}, or None in a
   build without TW_LAUNCH_TIMING; reset_timings() zeroes them */
static PyObject *timings(PyObject *m, PyObject *unused) {
#ifdef TW_LAUNCH_TIMING
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    for (int i = 0; i < PH_COUNT; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(g_phase_ns[i]);
        if (!v || PyDict_SetItemString(d, PHASE_NAMES[i], v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    uint64_t t0 = tw_now(), t1 = t0;
    for (int i = 0; i < 1000; i++) t1 = tw_now();
    PyObject *n = Py_BuildValue("{sKsd}", "launches", (unsigned long long)g_launches,
                                "clock_ns", (double)(t1 - t0) / 1000.0);
    if (!n || PyDict_Update(d, n) < 0) {
        Py_XDECREF(n);
        Py_DECREF(d);
        return NULL;
    }
    Py_DECREF(n);
    return d;
#else
    Py_RETURN_NONE;
#endif
}

static PyObject *reset_timings(PyObject *m, PyObject *unused) {
#ifdef TW_LAUNCH_TIMING
    memset(g_phase_ns, 0, sizeof g_phase_ns);
    g_launches = 0;
#endif
    Py_RETURN_NONE;
}
