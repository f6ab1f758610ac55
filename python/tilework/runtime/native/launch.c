/* tilework's native launch path (CPython C API, no CUDA headers).

   A `Signature` per @jit kernel turns one launch's bound arguments into the variant key (the
   same tuple `launcher.fast_key_and_params` builds, so both paths share `fn.cache`), finds the
   loaded variant, packs its parameters by the variant's kinds (`abi.py`) and calls
   cuLaunchKernel on torch's current stream.  Anything it does not handle (an unseen variant,
   another device, a kernel without a native handle) returns None: the Python path takes over.
   The driver is dlopen'ed (libcuda.so.1, or the path `load_driver` is given), so the module
   builds with only a C compiler and Python's headers. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef int CUresult;
typedef CUresult (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shared, void *stream,
                              void **params, void **extra);
typedef CUresult (*errname_fn)(CUresult, const char **);
typedef const char *(*hip_errname_fn)(int);

static launch_fn p_launch;       /* cuLaunchKernel */
static errname_fn p_errname;
static PyObject *g_errtype;      /* the exception a failed launch raises (CudaError) */
static launch_fn p_hip_launch;   /* hipModuleLaunchKernel: the same shape */
static hip_errname_fn p_hip_errname;
static PyObject *g_hip_errtype;  /* HipError */
static PyObject *g_get_device;   /* torch._C._cuda_getDevice, or NULL before torch is seen */
static PyObject *g_raw_stream;   /* torch._C._cuda_getCurrentRawStream */
static PyObject *s_data_ptr, *s_dtype, *s_get_device, *s_value, *s_native, *s_i32;

#define MAX_PARAMS 256

/* ---- parameter packing ------------------------------------------------------------------ */

static int pack_one(char kind, PyObject *v, uint64_t *slot) {
    *slot = 0;
    switch (kind) {
    case 'p': case 'i': case 'l': case 'L': case 'c': case 's': case 'C': case 'S': case 'I': {
        unsigned long long u;
        if (PyLong_Check(v)) {
            u = PyLong_AsUnsignedLongLongMask(v);
        } else {
            PyObject *n = PyNumber_Long(v);
            if (!n) return -1;
            u = PyLong_AsUnsignedLongLongMask(n);
            Py_DECREF(n);
        }
        if (u == (unsigned long long)-1 && PyErr_Occurred()) return -1;
        int w = kind == 'p' || kind == 'l' || kind == 'L' ? 8 : kind == 'i' || kind == 'I' ? 4
              : kind == 's' || kind == 'S' ? 2 : 1;
        memcpy(slot, &u, w); /* two's complement at the parameter's width (little endian) */
        return 0;
    }
    case 'f': {
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred()) return -1;
        float f = (float)d;
        memcpy(slot, &f, 4);
        return 0;
    }
    case 'd': {
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred()) return -1;
        memcpy(slot, &d, 8);
        return 0;
    }
    case 'b': {
        int t = PyObject_IsTrue(v);
        if (t < 0) return -1;
        *(uint8_t *)slot = (uint8_t)t;
        return 0;
    }
    case 'h': { /* fp16 bits, rounded to nearest even; out of range: infinity */
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred()) return -1;
        unsigned char b[2];
#if PY_VERSION_HEX >= 0x030B0000
        if (PyFloat_Pack2(d, (char *)b, 1) < 0) {
#else
        if (_PyFloat_Pack2(d, b, 1) < 0) {
#endif
            PyErr_Clear();
            b[0] = 0; b[1] = d < 0 ? 0xFC : 0x7C;
        }
        uint16_t h = (uint16_t)(b[0] | b[1] << 8);
        memcpy(slot, &h, 2);
        return 0;
    }
    case 'B': { /* bf16 bits through fp32, rounded to nearest even; NaN stays NaN */
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred()) return -1;
        uint16_t h;
        if (isnan(d)) {
            h = 0x7FC0;
        } else {
            float f = (float)d;
            uint32_t bits;
            memcpy(&bits, &f, 4);
            if (isinf(f) && !isinf(d)) bits = d < 0 ? 0xFF800000u : 0x7F800000u;
            h = (uint16_t)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
        }
        memcpy(slot, &h, 2);
        return 0;
    }
    }
    PyErr_Format(PyExc_ValueError, "unknown parameter kind %c", kind);
    return -1;
}

/* ---- Kernel: one loaded variant's handle ------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    void *function;
    unsigned block, shared;
    int device;
    int hip; /* launched by hipModuleLaunchKernel, the parameters packed in one buffer */
    Py_ssize_t nparams;
    char kinds[MAX_PARAMS + 1];
    PyObject *name;
} Kernel;

static int Kernel_init(Kernel *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"function", "block", "shared", "kinds", "name", "device", "hip",
                            NULL};
    unsigned long long f;
    const char *kinds;
    Py_ssize_t nk;
    PyObject *name;
    self->device = 0;
    self->hip = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "KIIs#U|ip", names, &f, &self->block,
                                     &self->shared, &kinds, &nk, &name, &self->device,
                                     &self->hip))
        return -1;
    if (nk > MAX_PARAMS) {
        PyErr_Format(PyExc_ValueError, "%zd kernel parameters, at most %d go natively", nk,
                     MAX_PARAMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nk; i++)
        if (!strchr("pilLfbcsCSIdhB", kinds[i])) {
            PyErr_Format(PyExc_ValueError, "unknown parameter kind %c", kinds[i]);
            return -1;
        }
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

static int kind_size(char kind) {
    switch (kind) {
    case 'p': case 'l': case 'L': case 'd': return 8;
    case 'i': case 'I': case 'f': return 4;
    case 's': case 'S': case 'h': case 'B': return 2;
    default: return 1;
    }
}

/* HIP's argument buffer: each parameter at its natural alignment (the AMDGPU kernel ABI, as
   struct's '@' format); returns its size */
static size_t pack_buffer(Kernel *k, const uint64_t *slots, unsigned char *buf) {
    size_t off = 0;
    for (Py_ssize_t i = 0; i < k->nparams; i++) {
        size_t w = (size_t)kind_size(k->kinds[i]), start = (off + w - 1) / w * w;
        memset(buf + off, 0, start - off); /* the padding, zero as struct.pack's */
        off = start;
        memcpy(buf + off, &slots[i], w);
        off += w;
    }
    return off;
}

static int do_hip_launch(Kernel *k, unsigned gx, unsigned gy, unsigned gz, void *stream,
                         uint64_t *slots) {
    uint64_t buf[MAX_PARAMS + 1]; /* 8-byte aligned, large enough for any packing */
    size_t size = pack_buffer(k, slots, (unsigned char *)buf);
    void *extra[] = {(void *)1, buf, (void *)2, &size, (void *)3}; /* POINTER, SIZE, END */
    if (!p_hip_launch) {
        PyErr_SetString(PyExc_RuntimeError, "the native launcher has no HIP runtime loaded");
        return -1;
    }
    CUresult err = p_hip_launch(k->function, gx, gy, gz, k->block, 1, 1, k->shared, stream,
                                NULL, extra);
    if (err) {
        const char *en = p_hip_errname ? p_hip_errname(err) : NULL;
        PyErr_Format(g_hip_errtype ? g_hip_errtype : PyExc_RuntimeError,
                     "launching %U failed: %s", k->name, en ? en : "unknown error");
        return -1;
    }
    return 0;
}

static int do_launch(Kernel *k, unsigned gx, unsigned gy, unsigned gz, void *stream,
                     uint64_t *slots) {
    void *ptrs[MAX_PARAMS];
    if (k->hip) return do_hip_launch(k, gx, gy, gz, stream, slots);
    if (!p_launch) {
        PyErr_SetString(PyExc_RuntimeError, "the native launcher has no driver loaded");
        return -1;
    }
    for (Py_ssize_t i = 0; i < k->nparams; i++) ptrs[i] = &slots[i];
    CUresult err = p_launch(k->function, gx, gy, gz, k->block, 1, 1, k->shared, stream, ptrs,
                            NULL);
    if (err) {
        const char *en = NULL;
        if (!p_errname || p_errname(err, &en) || !en) en = "unknown error";
        PyErr_Format(g_errtype ? g_errtype : PyExc_RuntimeError, "launching %U failed: %s",
                     k->name, en);
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
    if (self->hip) { /* the packed buffer */
        size_t size = pack_buffer(self, slots, (unsigned char *)buf);
        return PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)size);
    }
    return PyBytes_FromStringAndSize((const char *)slots, self->nparams * 8);
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

static PyMethodDef Kernel_methods[] = {
    {"pack", (PyCFunction)Kernel_pack, METH_O, "the parameter slots' bytes (8 per parameter)"},
    {"launch", (PyCFunction)Kernel_launch, METH_VARARGS, "launch(gx, gy, gz, stream, params)"},
    {NULL}};

static PyObject *Kernel_get_kinds(Kernel *self, void *c) {
    return PyUnicode_FromString(self->kinds);
}
static PyObject *Kernel_get_device(Kernel *self, void *c) { return PyLong_FromLong(self->device); }

static PyGetSetDef Kernel_getset[] = {{"kinds", (getter)Kernel_get_kinds, NULL, NULL, NULL},
                                      {"device", (getter)Kernel_get_device, NULL, NULL, NULL},
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

/* ---- Signature: one @jit kernel's key, lookup and launch -------------------------------- */

typedef struct {
    PyObject_HEAD
    Py_ssize_t n;
    char *is_cx, *nospec;
    PyObject *names;       /* tuple of str */
    PyObject *torch_types; /* set: torch tensor classes (launcher's, shared) */
    PyObject *cx_type;     /* tl.constexpr */
    PyObject *entry;       /* launcher.arg_entry(fn, name, nospec, a) -> (key, param) */
    PyObject *fn;
    PyObject *noparam;     /* launcher's "no parameter" marker */
    PyObject *several;     /* the list subclass of several parameters */
    PyObject *grid;        /* launch_args.normalize_grid(fn, grid, values) */
} Signature;

static int Signature_init(Signature *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"fn", "is_constexpr", "nospec", "names", "torch_types",
                            "constexpr_type", "entry", "noparam", "several", "grid", NULL};
    PyObject *fn, *iscx, *nospec, *nm, *tt, *cx, *entry, *np, *sv, *grid;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOO!O!OOOOO", names, &fn, &iscx, &nospec,
                                     &PyTuple_Type, &nm, &PySet_Type, &tt, &cx, &entry, &np,
                                     &sv, &grid))
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(nm);
    if (PySequence_Size(iscx) != n || PySequence_Size(nospec) != n) {
        PyErr_SetString(PyExc_ValueError, "is_constexpr, nospec and names differ in length");
        return -1;
    }
    self->is_cx = PyMem_Calloc(n + 1, 1);
    self->nospec = PyMem_Calloc(n + 1, 1);
    if (!self->is_cx || !self->nospec) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = PySequence_GetItem(iscx, i), *b = PySequence_GetItem(nospec, i);
        if (!a || !b) { Py_XDECREF(a); Py_XDECREF(b); return -1; }
        self->is_cx[i] = (char)PyObject_IsTrue(a);
        self->nospec[i] = (char)PyObject_IsTrue(b);
        Py_DECREF(a); Py_DECREF(b);
    }
    self->n = n;
#define KEEP(f, v) Py_INCREF(v); Py_XSETREF(self->f, v)
    KEEP(fn, fn); KEEP(names, nm); KEEP(torch_types, tt); KEEP(cx_type, cx); KEEP(entry, entry);
    KEEP(noparam, np); KEEP(several, sv); KEEP(grid, grid);
#undef KEEP
    return 0;
}

static void Signature_dealloc(Signature *self) {
    PyMem_Free(self->is_cx);
    PyMem_Free(self->nospec);
    Py_XDECREF(self->fn); Py_XDECREF(self->names); Py_XDECREF(self->torch_types);
    Py_XDECREF(self->cx_type); Py_XDECREF(self->entry); Py_XDECREF(self->noparam);
    Py_XDECREF(self->several); Py_XDECREF(self->grid);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

#define MIXED_DEVICES (-3)
#define NO_DEVICE (-2)

/* The key tuple and the parameter objects (new references in params[0..*np)) of one launch;
   *device: the torch tensors' device (NO_DEVICE: none, MIXED_DEVICES: several). */
static PyObject *key_and_params(Signature *s, PyObject *values, PyObject **params,
                                Py_ssize_t *np, int *device) {
    if (!PyTuple_Check(values) || PyTuple_GET_SIZE(values) != s->n) {
        PyErr_SetString(PyExc_TypeError, "values must be a tuple of the kernel's arguments");
        return NULL;
    }
    PyObject *key = PyTuple_New(s->n);
    if (!key) return NULL;
    *np = 0;
    *device = NO_DEVICE;
    for (Py_ssize_t i = 0; i < s->n; i++) {
        PyObject *a = PyTuple_GET_ITEM(values, i), *k = NULL, *p = NULL;
        PyTypeObject *t = Py_TYPE(a);
        if (s->is_cx[i]) {
            k = (PyObject *)t == s->cx_type ? PyObject_GetAttr(a, s_value) : Py_NewRef(a);
            if (!k) goto fail;
            PyTuple_SET_ITEM(key, i, k);
            continue;
        }
        long dev = -1; /* a torch tensor's device; -1: on the CPU (the Python rule says so) */
        if (PySet_GET_SIZE(s->torch_types) && PySet_Contains(s->torch_types, (PyObject *)t) == 1) {
            PyObject *d = PyObject_CallMethodNoArgs(a, s_get_device);
            if (!d) goto fail;
            dev = PyLong_AsLong(d);
            Py_DECREF(d);
            if (dev == -1 && PyErr_Occurred()) goto fail;
        }
        if (dev >= 0) {
            p = PyObject_CallMethodNoArgs(a, s_data_ptr);
            if (!p) goto fail;
            unsigned long long ptr = PyLong_AsUnsignedLongLongMask(p);
            if (ptr == (unsigned long long)-1 && PyErr_Occurred()) goto fail_p;
            PyObject *dt = PyObject_GetAttr(a, s_dtype);
            if (!dt) goto fail_p;
            k = PyTuple_Pack(2, dt, (ptr & 15) ? Py_False : Py_True);
            Py_DECREF(dt);
            if (!k) goto fail_p;
            if (*device == NO_DEVICE) *device = (int)dev;
            else if (*device != dev) *device = MIXED_DEVICES;
        } else if (PyLong_CheckExact(a)) {
            int overflow;
            long long v = PyLong_AsLongLongAndOverflow(a, &overflow);
            if (!overflow && v >= -2147483648LL && v < 2147483648LL &&
                (s->nospec[i] || v != 1)) {
                p = Py_NewRef(a);
                k = PyTuple_Pack(2, s_i32, !s->nospec[i] && !(v & 15) ? Py_True : Py_False);
                if (!k) goto fail_p;
            }
        }
        if (!k) { /* everything else: the Python rule */
            PyObject *r = PyObject_CallFunction(s->entry, "OOOO", s->fn,
                                                PyTuple_GET_ITEM(s->names, i),
                                                s->nospec[i] ? Py_True : Py_False, a);
            if (!r) goto fail;
            if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) {
                Py_DECREF(r);
                PyErr_SetString(PyExc_TypeError, "arg_entry must return (key, param)");
                goto fail;
            }
            k = Py_NewRef(PyTuple_GET_ITEM(r, 0));
            p = Py_NewRef(PyTuple_GET_ITEM(r, 1));
            Py_DECREF(r);
        }
        PyTuple_SET_ITEM(key, i, k);
        if (p == s->noparam) {
            Py_DECREF(p);
        } else if ((PyObject *)Py_TYPE(p) == s->several) {
            Py_ssize_t m = PyList_GET_SIZE(p);
            if (*np + m > MAX_PARAMS) { Py_DECREF(p); goto too_many; }
            for (Py_ssize_t j = 0; j < m; j++) params[(*np)++] = Py_NewRef(PyList_GET_ITEM(p, j));
            Py_DECREF(p);
        } else {
            if (*np >= MAX_PARAMS) { Py_DECREF(p); goto too_many; }
            params[(*np)++] = p;
        }
        continue;
    fail_p:
        Py_DECREF(p);
        goto fail;
    }
    return key;
too_many:
    PyErr_Format(PyExc_ValueError, "more than %d kernel parameters", MAX_PARAMS);
fail:
    Py_DECREF(key);
    for (Py_ssize_t j = 0; j < *np; j++) Py_DECREF(params[j]);
    *np = 0;
    return NULL;
}

static PyObject *Signature_key_and_params(Signature *self, PyObject *values) {
    PyObject *params[MAX_PARAMS];
    Py_ssize_t np;
    int device;
    PyObject *key = key_and_params(self, values, params, &np, &device);
    if (!key) return NULL;
    PyObject *lst = PyList_New(np);
    if (!lst) {
        Py_DECREF(key);
        for (Py_ssize_t j = 0; j < np; j++) Py_DECREF(params[j]);
        return NULL;
    }
    for (Py_ssize_t j = 0; j < np; j++) PyList_SET_ITEM(lst, j, params[j]);
    PyObject *dev = device == NO_DEVICE ? Py_NewRef(Py_None) : PyLong_FromLong(device);
    return Py_BuildValue("NNN", key, lst, dev);
}

static int grid_dim(PyObject *x, unsigned *out) {
    if (!PyLong_CheckExact(x)) return 0;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
    if (overflow || v < 0 || v > 0xFFFFFFFFLL) return 0;
    *out = (unsigned)v;
    return 1;
}

/* launch(values, opts, cache, grid) -> the loaded variant, launched; None: not handled here */
static PyObject *Signature_launch(Signature *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "launch(values, opts, cache, grid)");
        return NULL;
    }
    PyObject *values = args[0], *opts = args[1], *cache = args[2], *grid = args[3];
    PyObject *params[MAX_PARAMS];
    Py_ssize_t np = 0;
    int device;
    PyObject *ret = NULL, *ck = NULL, *g = NULL, *nat = NULL, *k = NULL;
    PyObject *key = key_and_params(self, values, params, &np, &device);
    if (!key) return NULL;
    if (device == MIXED_DEVICES) { ret = Py_NewRef(Py_None); goto done; } /* Python's message */
    ck = PyTuple_Pack(2, key, opts);
    if (!ck) goto done;
    k = PyDict_GetItemWithError(cache, ck);
    if (!k) { if (!PyErr_Occurred()) ret = Py_NewRef(Py_None); goto done; }
    Py_INCREF(k); /* held: the calls below run Python code that could drop it from `cache` */
    nat = PyObject_GetAttr(k, s_native);
    if (!nat) { /* a kernel object without a native handle: the Python path */
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) { PyErr_Clear(); ret = Py_NewRef(Py_None); }
        goto done;
    }
    if (Py_TYPE(nat) != &KernelType) { ret = Py_NewRef(Py_None); goto done; }
    Kernel *kn = (Kernel *)nat;
    /* the grid: a tuple of 1-3 ints here, anything else through normalize_grid */
    unsigned gd[3] = {1, 1, 1};
    int ok = PyTuple_CheckExact(grid) && PyTuple_GET_SIZE(grid) >= 1 && PyTuple_GET_SIZE(grid) <= 3;
    for (Py_ssize_t i = 0; ok && i < PyTuple_GET_SIZE(grid); i++)
        ok = grid_dim(PyTuple_GET_ITEM(grid, i), &gd[i]);
    if (!ok) {
        g = PyObject_CallFunctionObjArgs(self->grid, self->fn, grid, values, NULL);
        if (!g) goto done;
        if (!PyTuple_Check(g) || PyTuple_GET_SIZE(g) != 3 || !grid_dim(PyTuple_GET_ITEM(g, 0), &gd[0])
            || !grid_dim(PyTuple_GET_ITEM(g, 1), &gd[1]) || !grid_dim(PyTuple_GET_ITEM(g, 2), &gd[2])) {
            ret = Py_NewRef(Py_None);
            goto done;
        }
    }
    /* the device and torch's current stream on it */
    unsigned long long stream = 0;
    if (g_get_device) {
        PyObject *d = PyObject_CallNoArgs(g_get_device);
        if (!d) goto done;
        long cur = PyLong_AsLong(d);
        Py_DECREF(d);
        if (cur == -1 && PyErr_Occurred()) goto done;
        if ((device != NO_DEVICE && device != cur) || kn->device != cur) {
            ret = Py_NewRef(Py_None); /* another device: the Python path switches to it */
            goto done;
        }
        PyObject *di = PyLong_FromLong(cur);
        if (!di) goto done;
        PyObject *s = PyObject_CallOneArg(g_raw_stream, di);
        Py_DECREF(di);
        if (!s) goto done;
        stream = PyLong_AsUnsignedLongLongMask(s);
        Py_DECREF(s);
        if (stream == (unsigned long long)-1 && PyErr_Occurred()) goto done;
    } else if (device != NO_DEVICE && device != kn->device) {
        ret = Py_NewRef(Py_None);
        goto done;
    }
    if (gd[0] && gd[1] && gd[2]) {
        uint64_t slots[MAX_PARAMS];
        if (pack_all(kn, params, np, slots) < 0 ||
            do_launch(kn, gd[0], gd[1], gd[2], (void *)(uintptr_t)stream, slots) < 0)
            goto done;
    }
    ret = Py_NewRef(k);
done:
    Py_XDECREF(k);
    Py_XDECREF(nat);
    Py_XDECREF(g);
    Py_XDECREF(ck);
    Py_DECREF(key);
    for (Py_ssize_t j = 0; j < np; j++) Py_DECREF(params[j]);
    return ret;
}

static PyMethodDef Signature_methods[] = {
    {"key_and_params", (PyCFunction)Signature_key_and_params, METH_O,
     "(key, params, device) of one launch's bound arguments"},
    {"launch", (PyCFunction)(void (*)(void))Signature_launch, METH_FASTCALL,
     "launch(values, opts, cache, grid) -> the launched variant, or None"},
    {NULL}};

static PyTypeObject SignatureType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tilework_native.Signature",
    .tp_basicsize = sizeof(Signature),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Signature_init,
    .tp_dealloc = (destructor)Signature_dealloc,
    .tp_methods = Signature_methods,
};

/* ---- module ---------------------------------------------------------------------------- */

static PyObject *load_driver(PyObject *m, PyObject *args) {
    const char *path;
    PyObject *errtype;
    if (!PyArg_ParseTuple(args, "sO", &path, &errtype)) return NULL;
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) return PyErr_Format(PyExc_OSError, "cannot load %s: %s", path, dlerror());
    launch_fn l = (launch_fn)dlsym(h, "cuLaunchKernel");
    if (!l) return PyErr_Format(PyExc_OSError, "%s has no cuLaunchKernel", path);
    p_launch = l;
    p_errname = (errname_fn)dlsym(h, "cuGetErrorName");
    Py_INCREF(errtype);
    Py_XSETREF(g_errtype, errtype);
    Py_RETURN_NONE;
}

static PyObject *load_hip(PyObject *m, PyObject *args) {
    const char *path;
    PyObject *errtype;
    if (!PyArg_ParseTuple(args, "sO", &path, &errtype)) return NULL;
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) return PyErr_Format(PyExc_OSError, "cannot load %s: %s", path, dlerror());
    launch_fn l = (launch_fn)dlsym(h, "hipModuleLaunchKernel");
    if (!l) return PyErr_Format(PyExc_OSError, "%s has no hipModuleLaunchKernel", path);
    p_hip_launch = l;
    p_hip_errname = (hip_errname_fn)dlsym(h, "hipGetErrorName");
    Py_INCREF(errtype);
    Py_XSETREF(g_hip_errtype, errtype);
    Py_RETURN_NONE;
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
    {"load_driver", load_driver, METH_VARARGS, "load_driver(path, error_type)"},
    {"load_hip", load_hip, METH_VARARGS, "load_hip(path, error_type): the HIP runtime"},
    {"set_stream_source", set_stream_source, METH_VARARGS,
     "set_stream_source(get_device, raw_stream): torch's current device and stream getters "
     "(None, None: the default stream)"},
    {NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "tilework_native", NULL, -1,
                                       module_methods};

PyMODINIT_FUNC PyInit_tilework_native(void) {
    if (PyType_Ready(&KernelType) < 0 || PyType_Ready(&SignatureType) < 0) return NULL;
#define INTERN(v, s) if (!(v = PyUnicode_InternFromString(s))) return NULL
    INTERN(s_data_ptr, "data_ptr"); INTERN(s_dtype, "dtype");
    INTERN(s_get_device, "get_device"); INTERN(s_value, "value"); INTERN(s_native, "native");
    INTERN(s_i32, "i32");
#undef INTERN
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    Py_INCREF(&KernelType);
    PyModule_AddObject(m, "Kernel", (PyObject *)&KernelType);
    Py_INCREF(&SignatureType);
    PyModule_AddObject(m, "Signature", (PyObject *)&SignatureType);
    return m;
}
