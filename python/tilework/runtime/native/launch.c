/* tilework's native launch path (CPython C API, no CUDA headers).

   A `Signature` per @jit kernel turns one launch's bound arguments into the variant key (the
   same tuple `launcher.fast_key_and_params` builds, so both paths share `fn.cache`), finds the
   loaded variant, packs its parameters by the variant's kinds (`abi.py`) and calls its
   driver's launch on torch's current stream: cuLaunchKernel (CUDA), or hipModuleLaunchKernel
   (HIP, a kernel made with hip=True; ROCm torch's current stream is HIP's).  Anything it does
   not handle (an unseen variant, another device, a kernel without a native handle) returns
   None: the Python path takes over.  The drivers are dlopen'ed (libcuda.so.1 and
   libamdhip64.so, or the paths `load_driver`/`load_hip` are given), so the module builds with
   only a C compiler and Python's headers, and one build serves both. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef CUresult (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shared, void *stream,
                              void **params, void **extra);
typedef CUresult (*errname_fn)(CUresult, const char **);
/* cuLaunchKernelEx's config and attribute, laid out as cuda.h's CUlaunchConfig and
   CUlaunchAttribute (an id, padding to 8, a 64-byte value union): only the cooperative
   attribute (CU_LAUNCH_ATTRIBUTE_COOPERATIVE, 2) is set here */
typedef struct {
    int id;
    char pad[4];
    union { char pad[64]; int cooperative; } value;
} LaunchAttribute;
typedef struct {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared;
    void *stream;
    LaunchAttribute *attrs;
    unsigned num_attrs;
} LaunchConfig;
#define CU_LAUNCH_ATTRIBUTE_COOPERATIVE 2
typedef CUresult (*launch_ex_fn)(const LaunchConfig *, void *f, void **params, void **extra);
typedef CUresult (*ctx_fn)(void **);
typedef const char *(*hip_errname_fn)(int);

/* A driver's entry points, found when it is loaded: CUDA's cuLaunchKernel and
   hipModuleLaunchKernel take the same arguments; HIP gets its parameters as one packed buffer
   (`extra`), whose list ends with 3 (HIP_LAUNCH_PARAM_END), CUDA's slot pointers.  Everything
   before the call (binding, key, lookup, packing) is the same code for both. */
typedef struct {
    const char *what;          /* the launch function's name */
    launch_fn launch;          /* NULL: not loaded */
    errname_fn errname;        /* cuGetErrorName, or NULL */
    hip_errname_fn hip_errname; /* hipGetErrorName, or NULL */
    PyObject *errtype;         /* the exception a failed launch raises (CudaError, HipError) */
    int packed;                /* 1: one naturally aligned buffer through `extra` (HIP) */
    void *extra_end;           /* the `extra` list's end marker */
    size_t buffer_align;       /* the packed buffer's size is a multiple of it (HIP: 4, the
                                  kernarg segment's size, as LLVM's AMDGPU ABI rounds it) */
} Driver;

static Driver g_cuda = {"cuLaunchKernel", NULL, NULL, NULL, NULL, 0, (void *)0, 1};
static Driver g_hip = {"hipModuleLaunchKernel", NULL, NULL, NULL, NULL, 1, (void *)3, 4};
static ctx_fn p_ctx_get_current; /* cuCtxGetCurrent, or NULL */
static launch_ex_fn p_launch_ex; /* cuLaunchKernelEx (cooperative launches), or NULL */
static PyObject *g_get_device;   /* torch._C._cuda_getDevice, or NULL before torch is seen */
static PyObject *g_raw_stream;   /* torch._C._cuda_getCurrentRawStream */
static PyObject *s_data_ptr, *s_dtype, *s_get_device, *s_value, *s_native, *s_i32, *s_fp32,
    *s_i1, *s_cache, *s_base, *s_shape, *s_strides, *s_block_shape, *s_padding, *s_is_cuda,
    *s_entry;

#define MAX_PARAMS 256

#include "pack.h"
#include "timing.h"

/* the last failed launch's CUresult and driver: a CUDA launch in a thread with no current
   context (CUDA_ERROR_INVALID_CONTEXT) goes back to the Python path, which binds one */
static int g_last_err;
static const Driver *g_last_drv;
#define CUDA_ERROR_INVALID_CONTEXT 201

/* ---- Kernel: one loaded variant's handle ------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    void *function;
    unsigned block, shared;
    int device;
    const Driver *drv; /* &g_cuda, or &g_hip (hip=True): whose entry point launches it */
    void *context; /* the CUDA context its module is loaded in (0: not known) */
    Py_ssize_t nparams;
    char kinds[MAX_PARAMS + 1];
    PyObject *name;
    PyObject *maps; /* kinds with 'T': tma.launch_maps' maps(fn, values) -> the tensor maps */
    PyObject *scratch; /* allocation.launch_scratch's scratch(programs, stream) -> (buffer,
                          address): the last parameter, global scratch */
    unsigned long long coop; /* launch_cooperative_grid: the programs resident at once (0: a
                                plain launch); a larger grid calls `refuse`, which raises */
    PyObject *refuse;        /* refuse((gx, gy, gz)): the runtime's message */
} Kernel;

static int Kernel_init(Kernel *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"function", "block", "shared", "kinds", "name", "device", "hip",
                            "context", "maps", "scratch", "cooperative", "refuse", NULL};
    unsigned long long f, ctx = 0, coop = 0;
    const char *kinds;
    Py_ssize_t nk;
    PyObject *name, *maps = Py_None, *scratch = Py_None, *refuse = Py_None;
    int hip = 0;
    self->device = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "KIIs#U|ipKOOKO", names, &f, &self->block,
                                     &self->shared, &kinds, &nk, &name, &self->device, &hip,
                                     &ctx, &maps, &scratch, &coop, &refuse))
        return -1;
    if (coop && (hip || !PyCallable_Check(refuse))) {
        PyErr_SetString(PyExc_ValueError, hip ? "a cooperative launch is CUDA's here"
                        : "a cooperative launch needs refuse(grid), raising for a grid too large");
        return -1;
    }
    self->coop = coop;
    Py_XSETREF(self->refuse, coop ? Py_NewRef(refuse) : NULL);
    self->drv = hip ? &g_hip : &g_cuda;
    self->context = (void *)(uintptr_t)ctx;
    if (nk > MAX_PARAMS) {
        PyErr_Format(PyExc_ValueError, "%zd kernel parameters, at most %d go natively", nk,
                     MAX_PARAMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nk; i++)
        if (!strchr("pilLfbcsCSIdhBT", kinds[i])) {
            PyErr_Format(PyExc_ValueError, "unknown parameter kind %c", kinds[i]);
            return -1;
        }
    /* global scratch: the last parameter, whose buffer `scratch` allocates per launch */
    int has_scratch = scratch != Py_None;
    if (has_scratch && (!PyCallable_Check(scratch) || !nk || kinds[nk - 1] != 'p')) {
        PyErr_SetString(PyExc_ValueError, "global scratch is a callable scratch(programs, "
                        "stream) and the last parameter, a pointer (kind p)");
        return -1;
    }
    nk -= has_scratch; /* (the tensor maps come before it) */
    /* tensor maps (kind T, 128 bytes by address): CUDA's slot pointers only, the trailing
       parameters (but the scratch), which `maps` gives per launch */
    const char *t = memchr(kinds, 'T', nk);
    if (t && hip) {
        PyErr_SetString(PyExc_ValueError, "tensor map parameters (kind T) are CUDA's");
        return -1;
    }
    if (t && (maps == Py_None || !PyCallable_Check(maps))) {
        PyErr_SetString(PyExc_ValueError, "tensor map parameters (kind T) need maps(fn, values)");
        return -1;
    }
    for (const char *c = t; c && c < kinds + nk; c++)
        if (*c != 'T') {
            PyErr_SetString(PyExc_ValueError, "tensor map parameters (kind T) come last");
            return -1;
        }
    Py_XSETREF(self->maps, t ? Py_NewRef(maps) : NULL);
    Py_XSETREF(self->scratch, has_scratch ? Py_NewRef(scratch) : NULL);
    nk += has_scratch;
    self->function = (void *)(uintptr_t)f;
    memcpy(self->kinds, kinds, nk);
    self->kinds[nk] = 0;
    self->nparams = nk;
    Py_INCREF(name);
    Py_XSETREF(self->name, name);
    return 0;
}

static void Kernel_dealloc(Kernel *self) {
    Py_XDECREF(self->name);
    Py_XDECREF(self->maps);
    Py_XDECREF(self->scratch);
    Py_XDECREF(self->refuse);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* packs `n` parameter objects into slots (8 bytes each) */
static int pack_all(Kernel *k, PyObject *const *params, Py_ssize_t n, uint64_t *slots) {
    if (n != k->nparams) {
        PyErr_Format(PyExc_ValueError, "%U takes %zd parameters, got %zd", k->name, k->nparams,
                     n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (pack_one(k->kinds[i], params[i], &slots[i]) < 0) return -1;
    return 0;
}

/* the driver's launch: each slot's address (CUDA), or the slots packed into one buffer
   handed over by `extra` (HIP: HIP_LAUNCH_PARAM_BUFFER_POINTER, _SIZE, _END) */
static CUresult call_driver(Kernel *k, unsigned gx, unsigned gy, unsigned gz, void *stream,
                            uint64_t *slots) {
    const Driver *d = k->drv;
    if (d->packed) {
        uint64_t buf[MAX_PARAMS + 1]; /* 8-byte aligned, large enough for any packing */
        size_t size = pack_buffer(k->kinds, k->nparams, slots, d->buffer_align,
                                  (unsigned char *)buf);
        void *extra[] = {(void *)1, buf, (void *)2, &size, d->extra_end};
        return d->launch(k->function, gx, gy, gz, k->block, 1, 1, k->shared, stream, NULL,
                         extra);
    }
    void *ptrs[MAX_PARAMS];
    for (Py_ssize_t i = 0; i < k->nparams; i++) /* a tensor map's slot holds its address */
        ptrs[i] = k->kinds[i] == 'T' ? (void *)(uintptr_t)slots[i] : (void *)&slots[i];
    if (k->coop) { /* as Triton's launcher: cuLaunchKernelEx with the cooperative attribute */
        LaunchAttribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attr.value.cooperative = 1;
        LaunchConfig c = {gx, gy, gz, k->block, 1, 1, k->shared, stream, &attr, 1};
        return p_launch_ex(&c, k->function, ptrs, NULL);
    }
    return d->launch(k->function, gx, gy, gz, k->block, 1, 1, k->shared, stream, ptrs, NULL);
}

static const char *error_name(const Driver *d, CUresult err) {
    const char *en = NULL;
    if (d->hip_errname) en = d->hip_errname(err);
    else if (d->errname && d->errname(err, &en)) en = NULL;
    return en ? en : "unknown error";
}

static int do_launch(Kernel *k, unsigned gx, unsigned gy, unsigned gz, void *stream,
                     uint64_t *slots) {
    if (!k->drv->launch) {
        PyErr_Format(PyExc_RuntimeError, "the native launcher has no %s loaded", k->drv->what);
        return -1;
    }
    if (k->coop && (unsigned long long)gx * gy * gz > k->coop) {
        PyObject *r = PyObject_CallFunction(k->refuse, "((III))", gx, gy, gz);
        if (r) { /* (refuse returned: still not launched) */
            Py_DECREF(r);
            PyErr_Format(PyExc_ValueError, "%U: a cooperative grid of %llu programs, at most "
                         "%llu resident", k->name, (unsigned long long)gx * gy * gz, k->coop);
        }
        return -1;
    }
    if (k->coop && !p_launch_ex) {
        PyErr_SetString(PyExc_RuntimeError, "the driver has no cuLaunchKernelEx (a cooperative "
                        "launch)");
        return -1;
    }
    T_MARK(t0);
    CUresult err = call_driver(k, gx, gy, gz, stream, slots);
    T_ADD(PH_DRIVER, t0);
    if (err) {
        g_last_err = err;
        g_last_drv = k->drv;
        PyErr_Format(k->drv->errtype ? k->drv->errtype : PyExc_RuntimeError,
                     "launching %U failed: %s", k->name, error_name(k->drv, err));
        return -1;
    }
    return 0;
}

static PyObject *Kernel_pack(Kernel *self, PyObject *seq) {
    uint64_t slots[MAX_PARAMS], buf[MAX_PARAMS + 1];
    PyObject *fast = PySequence_Fast(seq, "params must be a sequence");
    if (!fast) return NULL;
    int rc = pack_all(self, PySequence_Fast_ITEMS(fast), PySequence_Fast_GET_SIZE(fast), slots);
    Py_DECREF(fast);
    if (rc < 0) return NULL;
    if (self->drv->packed) { /* the packed buffer */
        size_t size = pack_buffer(self->kinds, self->nparams, slots, self->drv->buffer_align,
                                  (unsigned char *)buf);
        return PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)size);
    }
    if (!self->maps) return PyBytes_FromStringAndSize((const char *)slots, self->nparams * 8);
    /* 8 bytes a slot, a tensor map's 128 */
    unsigned char out[MAX_PARAMS * 128], *o = out;
    for (Py_ssize_t i = 0; i < self->nparams; i++) {
        int tm = self->kinds[i] == 'T';
        memcpy(o, tm ? (const void *)(uintptr_t)slots[i] : (const void *)&slots[i], tm ? 128 : 8);
        o += tm ? 128 : 8;
    }
    return PyBytes_FromStringAndSize((const char *)out, o - out);
}

/* launch(gx, gy, gz, stream, params) */
static PyObject *Kernel_launch(Kernel *self, PyObject *args) {
    unsigned gx, gy, gz;
    unsigned long long stream;
    PyObject *seq;
    uint64_t slots[MAX_PARAMS];
    if (!PyArg_ParseTuple(args, "IIIKO", &gx, &gy, &gz, &stream, &seq)) return NULL;
    PyObject *fast = PySequence_Fast(seq, "params must be a sequence");
    if (!fast) return NULL;
    int rc = pack_all(self, PySequence_Fast_ITEMS(fast), PySequence_Fast_GET_SIZE(fast), slots);
    Py_DECREF(fast);
    if (rc < 0 || do_launch(self, gx, gy, gz, (void *)(uintptr_t)stream, slots) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* bench(gx, gy, gz, stream, params, n, packed=False) -> ns: n back-to-back launches of this
   kernel with these parameters, packed once, with no Python between them (the launch floor);
   `packed`: a CUDA kernel's parameters in one buffer (CU_LAUNCH_PARAM_BUFFER_POINTER, natural
   alignment) instead of kernelParams, to compare the driver's two ways (HIP's always are) */
static PyObject *Kernel_bench(Kernel *self, PyObject *args) {
    unsigned gx, gy, gz;
    unsigned long long stream;
    Py_ssize_t n;
    PyObject *seq;
    int packed = 0;
    uint64_t slots[MAX_PARAMS];
    if (!PyArg_ParseTuple(args, "IIIKOn|p", &gx, &gy, &gz, &stream, &seq, &n, &packed))
        return NULL;
    PyObject *fast = PySequence_Fast(seq, "params must be a sequence");
    if (!fast) return NULL;
    int rc = pack_all(self, PySequence_Fast_ITEMS(fast), PySequence_Fast_GET_SIZE(fast), slots);
    Py_DECREF(fast);
    if (rc < 0) return NULL;
    if (!self->drv->launch)
        return PyErr_Format(PyExc_RuntimeError, "bench: the native launcher has no %s loaded",
                            self->drv->what);
    if (packed && self->maps)
        return PyErr_Format(PyExc_ValueError, "bench: tensor maps go as slot pointers only");
    if (packed && self->coop)
        return PyErr_Format(PyExc_ValueError, "bench: a cooperative launch goes as slot "
                            "pointers only");
    if (self->coop && !p_launch_ex)
        return PyErr_Format(PyExc_RuntimeError, "bench: the driver has no cuLaunchKernelEx");
    Kernel k = *self; /* `packed`: a copy launched through a CUDA driver taking one buffer */
    Driver packed_cuda = g_cuda;
    packed_cuda.packed = 1;
    if (packed && !self->drv->packed) k.drv = &packed_cuda;
    struct timespec a, b;
    CUresult err = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (Py_ssize_t i = 0; i < n && !err; i++)
        err = call_driver(&k, gx, gy, gz, (void *)(uintptr_t)stream, slots);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (err) return PyErr_Format(self->drv->errtype ? self->drv->errtype : PyExc_RuntimeError,
                                 "launching %U failed: %s", self->name,
                                 error_name(self->drv, err));
    return PyLong_FromLongLong((long long)(b.tv_sec - a.tv_sec) * 1000000000LL +
                               (b.tv_nsec - a.tv_nsec));
}

static PyMethodDef Kernel_methods[] = {
    {"bench", (PyCFunction)Kernel_bench, METH_VARARGS,
     "bench(gx, gy, gz, stream, params, n, packed=False) -> ns of n bare driver launches"},
    {"pack", (PyCFunction)Kernel_pack, METH_O, "the parameter slots' bytes (8 per parameter)"},
    {"launch", (PyCFunction)Kernel_launch, METH_VARARGS, "launch(gx, gy, gz, stream, params)"},
    {NULL}};

static PyObject *Kernel_get_kinds(Kernel *self, void *c) {
    return PyUnicode_FromString(self->kinds);
}
static PyObject *Kernel_get_device(Kernel *self, void *c) { return PyLong_FromLong(self->device); }
static PyObject *Kernel_get_cooperative(Kernel *self, void *c) {
    return PyLong_FromUnsignedLongLong(self->coop);
}

static PyGetSetDef Kernel_getset[] = {{"kinds", (getter)Kernel_get_kinds, NULL, NULL, NULL},
                                      {"device", (getter)Kernel_get_device, NULL, NULL, NULL},
                                      {"cooperative", (getter)Kernel_get_cooperative, NULL,
                                       NULL, NULL},
                                      {NULL}};

static PyTypeObject KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tilework_native.Kernel",
    .tp_basicsize = sizeof(Kernel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Kernel_init,
    .tp_dealloc = (destructor)Kernel_dealloc,
    .tp_methods = Kernel_methods,
    .tp_getset = Kernel_getset,
};

#include "signature.h"
#include "bind.h"

/* ---- module ---------------------------------------------------------------------------- */

/* dlopen's `path` and fills `d` from it (its launch function `d->what` required) */
static void *open_driver(Driver *d, PyObject *args) {
    const char *path;
    PyObject *errtype;
    if (!PyArg_ParseTuple(args, "sO", &path, &errtype)) return NULL;
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) return PyErr_Format(PyExc_OSError, "cannot load %s: %s", path, dlerror());
    launch_fn l = (launch_fn)dlsym(h, d->what);
    if (!l) return PyErr_Format(PyExc_OSError, "%s has no %s", path, d->what);
    d->launch = l;
    Py_INCREF(errtype);
    Py_XSETREF(d->errtype, errtype);
    return h;
}

static PyObject *load_driver(PyObject *m, PyObject *args) {
    void *h = open_driver(&g_cuda, args);
    if (!h) return NULL;
    g_cuda.errname = (errname_fn)dlsym(h, "cuGetErrorName");
    p_ctx_get_current = (ctx_fn)dlsym(h, "cuCtxGetCurrent");
    p_launch_ex = (launch_ex_fn)dlsym(h, "cuLaunchKernelEx");
    Py_RETURN_NONE;
}

static PyObject *load_hip(PyObject *m, PyObject *args) {
    void *h = open_driver(&g_hip, args);
    if (!h) return NULL;
    g_hip.hip_errname = (hip_errname_fn)dlsym(h, "hipGetErrorName");
    Py_RETURN_NONE;
}

/* the file of the library a driver's launch function lives in: which one launches reach */
static PyObject *library_of(const Driver *d) {
    Dl_info info;
    if (!d->launch || !dladdr((void *)d->launch, &info) || !info.dli_fname) Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(info.dli_fname);
}

static PyObject *driver_path(PyObject *m, PyObject *unused) { return library_of(&g_cuda); }
static PyObject *hip_path(PyObject *m, PyObject *unused) { return library_of(&g_hip); }

/* the thread's current CUDA context (cuCtxGetCurrent through the loaded driver), as an int;
   None: no driver, none current, or the call failed (the runtime's queries ask it first: a
   context's device, hence its target, is fixed) */
static PyObject *current_context(PyObject *m, PyObject *unused) {
    void *ctx = NULL;
    if (!p_ctx_get_current || p_ctx_get_current(&ctx) || !ctx) Py_RETURN_NONE;
    return PyLong_FromVoidPtr(ctx);
}

static PyObject *set_stream_source(PyObject *m, PyObject *args) {
    PyObject *gd, *rs;
    if (!PyArg_ParseTuple(args, "OO", &gd, &rs)) return NULL;
    if (gd == Py_None || rs == Py_None) {
        Py_CLEAR(g_get_device);
        Py_CLEAR(g_raw_stream);
    } else {
        Py_INCREF(gd); Py_XSETREF(g_get_device, gd);
        Py_INCREF(rs); Py_XSETREF(g_raw_stream, rs);
    }
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"timings", timings, METH_NOARGS,
     "{phase: ns summed, launches, clock_ns} of the timing build (TW_LAUNCH_TIMING), else None"},
    {"reset_timings", reset_timings, METH_NOARGS, "zeroes the timing build's sums"},
    {"load_driver", load_driver, METH_VARARGS, "load_driver(path, error_type)"},
    {"driver_path", driver_path, METH_NOARGS, "the file cuLaunchKernel was found in"},
    {"load_hip", load_hip, METH_VARARGS, "load_hip(path, error_type): the HIP runtime"},
    {"hip_path", hip_path, METH_NOARGS, "the file hipModuleLaunchKernel was found in"},
    {"current_context", current_context, METH_NOARGS,
     "the thread's current CUDA context as an int (None: no driver or none current)"},
    {"set_stream_source", set_stream_source, METH_VARARGS,
     "set_stream_source(get_device, raw_stream): torch's current device and stream getters "
     "(None, None: the default stream)"},
    {NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "tilework_native", NULL, -1,
                                       module_methods};

PyMODINIT_FUNC PyInit_tilework_native(void) {
    if (PyType_Ready(&KernelType) < 0 || PyType_Ready(&SignatureType) < 0 ||
        PyType_Ready(&LaunchType) < 0)
        return NULL;
#define INTERN(v, s) if (!(v = PyUnicode_InternFromString(s))) return NULL
    INTERN(s_data_ptr, "data_ptr"); INTERN(s_dtype, "dtype");
    INTERN(s_get_device, "get_device"); INTERN(s_value, "value"); INTERN(s_native, "native");
    INTERN(s_i32, "i32"); INTERN(s_fp32, "fp32"); INTERN(s_i1, "i1"); INTERN(s_cache, "cache");
    INTERN(s_base, "base"); INTERN(s_shape, "shape"); INTERN(s_strides, "strides");
    INTERN(s_block_shape, "block_shape"); INTERN(s_padding, "padding");
    INTERN(s_is_cuda, "is_cuda"); INTERN(s_entry, "entry");
#undef INTERN
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    Py_INCREF(&KernelType);
    PyModule_AddObject(m, "Kernel", (PyObject *)&KernelType);
    Py_INCREF(&SignatureType);
    PyModule_AddObject(m, "Signature", (PyObject *)&SignatureType);
    return m;
}
