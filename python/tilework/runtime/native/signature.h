/* The native launcher's per-kernel part (included once, by launch.c, after Kernel):

   Signature: one @jit kernel's key, variant lookup and launch.  `sig(values, opts, cache,
   grid)` (the Python path's call) and `sig[grid](*args, **kwargs)` (a Launch: what
   `kernel[grid]` returns while this launcher is installed; it calls the kernel's generated
   binder itself and hands anything it does not handle to launcher.run).

   The key is the tuple `launcher.fast_key_and_params` builds.  A launch whose arguments are
   all common ones (torch tensors, ints, floats, bools, None, constexprs) is described by a
   fingerprint of two words an argument; a fingerprint seen before (a small memo per kernel)
   gives its key tuple back, so the lookup in fn.cache hashes it but compares by identity, and
   no tuple is built.  The memo holds its keys, so the objects its words point at stay alive:
   equal words mean the same objects.  fn.cache stays the only authority on variants. */

/* ---- torch tensor methods, looked up once per tensor class ------------------------------ */

typedef struct {
    PyTypeObject *type;
    PyObject *get_device, *data_ptr; /* the class's functions, called with the tensor */
    PyObject *dtype;                 /* the class's dtype descriptor, or NULL: getattr */
} TensorMethods;

#define N_TENSOR_TYPES 4
static TensorMethods g_tm[N_TENSOR_TYPES];
static unsigned g_tm_next;

static TensorMethods *tensor_methods(PyTypeObject *t) {
    for (int i = 0; i < N_TENSOR_TYPES; i++)
        if (g_tm[i].type == t) return &g_tm[i];
    PyObject *gd = PyObject_GetAttr((PyObject *)t, s_get_device);
    PyObject *dp = gd ? PyObject_GetAttr((PyObject *)t, s_data_ptr) : NULL;
    if (!dp) { Py_XDECREF(gd); return NULL; }
    PyObject *dt = PyObject_GetAttr((PyObject *)t, s_dtype);
    if (!dt) PyErr_Clear(); /* an instance attribute: read with getattr */
    else if (!Py_TYPE(dt)->tp_descr_get || !Py_TYPE(dt)->tp_descr_set) Py_CLEAR(dt);
    TensorMethods *e = &g_tm[g_tm_next++ % N_TENSOR_TYPES];
    Py_XDECREF(e->type); Py_XDECREF(e->get_device); Py_XDECREF(e->data_ptr);
    Py_XDECREF(e->dtype);
    Py_INCREF(t);
    e->type = t; e->get_device = gd; e->data_ptr = dp; e->dtype = dt;
    return e;
}

static PyObject *tensor_dtype(TensorMethods *tm, PyObject *a) {
    if (tm->dtype) return Py_TYPE(tm->dtype)->tp_descr_get(tm->dtype, a, (PyObject *)tm->type);
    return PyObject_GetAttr(a, s_dtype);
}

/* ---- Signature ------------------------------------------------------------------------- */

#define MEMO 8 /* fingerprints remembered per kernel */

typedef struct {
    uintptr_t *fp; /* 2 words an argument */
    PyObject *opts, *ck; /* the launch options tuple and the cache key (key, opts), held */
} MemoEntry;

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
    PyObject *binder;      /* fn._binder: (*args, **kwargs) -> (values, opts) */
    PyObject *run;         /* launcher.run(fn, grid, args, kwargs, launch, native) */
    PyObject *defaults;    /* per argument: its default, or `required` */
    PyObject *required;    /* the marker of an argument without a default */
    PyObject *options;     /* the launch options' names, in opts order (binder's) */
    char *own_option;      /* per option: 1 when not shadowed by an argument of that name */
    PyObject *ignored;     /* option names accepted and dropped */
    PyObject *last_grid, *last_launch; /* sig[grid] of the last grid object */
    PyObject *desc_type;   /* TensorDescriptor, or NULL: descriptors by the Python rule */
    PyObject *desc_memo;   /* tma._MEMO: descriptor state -> DescriptorMemo */
    MemoEntry memo[MEMO];
    unsigned memo_next;
} Signature;

static int Signature_init(Signature *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"fn", "is_constexpr", "nospec", "names", "torch_types",
                            "constexpr_type", "entry", "noparam", "several", "grid", "binder",
                            "run", "defaults", "required", "options", "ignored",
                            "descriptor_type", "descriptor_memo", NULL};
    PyObject *fn, *iscx, *nospec, *nm, *tt, *cx, *entry, *np, *sv, *grid;
    PyObject *binder = Py_None, *run = Py_None, *defaults = NULL, *required = Py_None;
    PyObject *options = NULL, *ignored = NULL, *dtype_ = NULL, *dmemo = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOO!O!OOOOO|OOO!OO!O!O!O!", names, &fn, &iscx,
                                     &nospec, &PyTuple_Type, &nm, &PySet_Type, &tt, &cx, &entry,
                                     &np, &sv, &grid, &binder, &run, &PyTuple_Type, &defaults,
                                     &required, &PyTuple_Type, &options, &PyTuple_Type,
                                     &ignored, &PyType_Type, &dtype_, &PyDict_Type, &dmemo))
        return -1;
    if (!dtype_ != !dmemo) {
        PyErr_SetString(PyExc_TypeError, "descriptor_type and descriptor_memo go together");
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(nm);
    if (defaults && PyTuple_GET_SIZE(defaults) != n) {
        PyErr_SetString(PyExc_ValueError, "defaults and names differ in length");
        return -1;
    }
    if (PySequence_Size(iscx) != n || PySequence_Size(nospec) != n) {
        PyErr_SetString(PyExc_ValueError, "is_constexpr, nospec and names differ in length");
        return -1;
    }
    if (self->is_cx) {
        PyErr_SetString(PyExc_TypeError, "a Signature is initialized once");
        return -1;
    }
    self->is_cx = PyMem_Calloc(n + 1, 1);
    self->nospec = PyMem_Calloc(n + 1, 1);
    if (!self->is_cx || !self->nospec) { PyErr_NoMemory(); return -1; }
    for (int m = 0; m < MEMO; m++)
        if (!(self->memo[m].fp = PyMem_Calloc(2 * n + 1, sizeof(uintptr_t)))) {
            PyErr_NoMemory();
            return -1;
        }
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
    KEEP(noparam, np); KEEP(several, sv); KEEP(grid, grid); KEEP(binder, binder); KEEP(run, run);
    if (dtype_) { KEEP(desc_type, dtype_); KEEP(desc_memo, dmemo); }
    if (defaults && options && ignored) { /* binding in C (else: the binder, always) */
        KEEP(defaults, defaults); KEEP(required, required); KEEP(options, options);
        KEEP(ignored, ignored);
        Py_ssize_t no = PyTuple_GET_SIZE(options);
        if (!(self->own_option = PyMem_Calloc(no + 1, 1))) { PyErr_NoMemory(); return -1; }
        for (Py_ssize_t j = 0; j < no; j++) {
            int shadowed = PySequence_Contains(nm, PyTuple_GET_ITEM(options, j));
            if (shadowed < 0) return -1;
            self->own_option[j] = !shadowed;
        }
    }
#undef KEEP
    return 0;
}

/* the garbage collector's view: fn holds its Signature (fn._native_launch), the Signature
   holds fn and its last Launch, which holds it */
#define SIGNATURE_OBJECTS(X) X(fn) X(names) X(torch_types) X(cx_type) X(entry) X(noparam) \
    X(several) X(grid) X(binder) X(run) X(defaults) X(required) X(options) X(ignored) \
    X(last_grid) X(last_launch) X(desc_type) X(desc_memo)

static int Signature_traverse(Signature *self, visitproc visit, void *arg) {
#define VISIT(f) Py_VISIT(self->f);
    SIGNATURE_OBJECTS(VISIT)
#undef VISIT
    for (int m = 0; m < MEMO; m++) {
        Py_VISIT(self->memo[m].opts);
        Py_VISIT(self->memo[m].ck);
    }
    return 0;
}

static int Signature_clear(Signature *self) {
#define CLEAR(f) Py_CLEAR(self->f);
    SIGNATURE_OBJECTS(CLEAR)
#undef CLEAR
    for (int m = 0; m < MEMO; m++) {
        Py_CLEAR(self->memo[m].opts);
        Py_CLEAR(self->memo[m].ck);
    }
    return 0;
}

static void Signature_dealloc(Signature *self) {
    PyObject_GC_UnTrack(self);
    Signature_clear(self);
    PyMem_Free(self->is_cx);
    PyMem_Free(self->nospec);
    for (int m = 0; m < MEMO; m++) PyMem_Free(self->memo[m].fp);
    PyMem_Free(self->own_option);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

#define MIXED_DEVICES (-3)
#define NO_DEVICE (-2)

/* a torch tensor's device, data pointer (a new int in *ptr) and dtype (new reference);
   1: done, 0: not a CUDA tensor (the Python rule has the message), -1: error */
static int tensor_parts(PyObject *a, long *dev, PyObject **ptr, PyObject **dtype) {
    TensorMethods *tm = tensor_methods(Py_TYPE(a));
    if (!tm) return -1;
    T_MARK(t0);
    PyObject *d = PyObject_Vectorcall(tm->get_device, &a, 1, NULL);
    T_ADD(PH_GETDEV, t0);
    if (!d) return -1;
    *dev = PyLong_AsLong(d);
    Py_DECREF(d);
    if (*dev == -1 && PyErr_Occurred()) return -1;
    if (*dev < 0) return 0;
    T_MARK(t1);
    *ptr = PyObject_Vectorcall(tm->data_ptr, &a, 1, NULL);
    T_ADD(PH_DATAPTR, t1);
    if (!*ptr) return -1;
    T_MARK(t2);
    *dtype = tensor_dtype(tm, a);
    T_ADD(PH_DTYPE, t2);
    if (!*dtype) { Py_CLEAR(*ptr); return -1; }
    return 1;
}

static void note_device(int *device, long dev) {
    if (*device == NO_DEVICE) *device = (int)dev;
    else if (*device != dev) *device = MIXED_DEVICES;
}

/* The (key entry, parameters) a host descriptor's state has in tma._MEMO (a new reference),
   looked up as `tma.descriptor_memo` does (the same key: base type, address, dtype, is_cuda,
   shape, strides, block, padding); NULL (no error set) where it is not there yet, or for
   anything but a descriptor of lists over a torch tensor: the Python rule then computes it. */
static PyObject *descriptor_entry(Signature *s, PyObject *d) {
    PyObject *base = NULL, *ptr = NULL, *dtype = NULL, *cuda = NULL, *f[4] = {NULL},
             *tu[3] = {NULL}, *key = NULL, *e = NULL;
    if (!(base = PyObject_GetAttr(d, s_base))) goto out;
    PyTypeObject *bt = Py_TYPE(base);
    if (!PySet_GET_SIZE(s->torch_types) || PySet_Contains(s->torch_types, (PyObject *)bt) != 1)
        goto out;
    TensorMethods *tm = tensor_methods(bt);
    if (!tm || !(ptr = PyObject_Vectorcall(tm->data_ptr, &base, 1, NULL)) ||
        !PyLong_CheckExact(ptr) || !(dtype = tensor_dtype(tm, base)) ||
        !(cuda = PyObject_GetAttr(base, s_is_cuda)))
        goto out;
    PyObject *names[4] = {s_shape, s_strides, s_block_shape, s_padding};
    for (int i = 0; i < 4; i++)
        if (!(f[i] = PyObject_GetAttr(d, names[i]))) goto out;
    for (int i = 0; i < 3; i++)
        if (!PyList_CheckExact(f[i]) || !(tu[i] = PyList_AsTuple(f[i]))) goto out;
    if (!(key = PyTuple_Pack(8, (PyObject *)bt, ptr, dtype, cuda, tu[0], tu[1], tu[2], f[3])))
        goto out;
    PyObject *m = PyDict_GetItemWithError(s->desc_memo, key); /* borrowed */
    if (m && (e = PyObject_GetAttr(m, s_entry)) &&
        !(PyTuple_CheckExact(e) && PyTuple_GET_SIZE(e) == 2))
        Py_CLEAR(e); /* None: not computed yet */
out:
    if (!e) PyErr_Clear(); /* (the Python rule says what is wrong, if anything) */
    Py_XDECREF(base); Py_XDECREF(ptr); Py_XDECREF(dtype); Py_XDECREF(cuda); Py_XDECREF(key);
    for (int i = 0; i < 4; i++) Py_XDECREF(f[i]);
    for (int i = 0; i < 3; i++) Py_XDECREF(tu[i]);
    return e;
}

/* The key tuple and the parameter objects (new references in params[0..*np)) of one launch;
   *device: the torch tensors' device (NO_DEVICE: none, MIXED_DEVICES: several).  Every
   argument the inline rules below do not take goes through launcher.arg_entry.  entries
   (NULL: not wanted): per argument, the several-parameters object arg_entry gave (a new
   reference), else NULL; a descriptor's carries its state's tensor maps, which the maps
   callable then finds without looking the state up again. */
static PyObject *key_and_params(Signature *s, PyObject *values, PyObject **params,
                                Py_ssize_t *np, int *device, PyObject **entries) {
    if (!PyTuple_Check(values) || PyTuple_GET_SIZE(values) != s->n) {
        PyErr_SetString(PyExc_TypeError, "values must be a tuple of the kernel's arguments");
        return NULL;
    }
    PyObject *key = PyTuple_New(s->n);
    if (!key) return NULL;
    *np = 0;
    *device = NO_DEVICE;
    if (entries)
        for (Py_ssize_t i = 0; i < s->n; i++) entries[i] = NULL;
    for (Py_ssize_t i = 0; i < s->n; i++) {
        PyObject *a = PyTuple_GET_ITEM(values, i), *k = NULL, *p = NULL;
        PyTypeObject *t = Py_TYPE(a);
        if (s->is_cx[i]) {
            k = (PyObject *)t == s->cx_type ? PyObject_GetAttr(a, s_value) : Py_NewRef(a);
            if (!k) goto fail;
            PyTuple_SET_ITEM(key, i, k);
            continue;
        }
        if (PySet_GET_SIZE(s->torch_types) && PySet_Contains(s->torch_types, (PyObject *)t) == 1) {
            long dev;
            PyObject *dt;
            int r = tensor_parts(a, &dev, &p, &dt);
            if (r < 0) goto fail;
            if (r) {
                unsigned long long ptr = PyLong_AsUnsignedLongLongMask(p);
                if (ptr == (unsigned long long)-1 && PyErr_Occurred()) { Py_DECREF(dt); goto fail_p; }
                k = PyTuple_Pack(2, dt, (ptr & 15) ? Py_False : Py_True);
                Py_DECREF(dt);
                if (!k) goto fail_p;
                note_device(device, dev);
            }
        } else if (PyLong_CheckExact(a)) {
            int overflow;
            long long v = PyLong_AsLongLongAndOverflow(a, &overflow);
            if (!overflow && v == 1 && !s->nospec[i]) {
                p = Py_NewRef(s->noparam);
                k = Py_NewRef(a);
            } else if (!overflow && v >= -2147483648LL && v < 2147483648LL) {
                p = Py_NewRef(a);
                k = PyTuple_Pack(2, s_i32, !s->nospec[i] && !(v & 15) ? Py_True : Py_False);
                if (!k) goto fail_p;
            }
        } else if (PyFloat_CheckExact(a)) {
            p = Py_NewRef(a);
            k = Py_NewRef(s_fp32);
        } else if (PyBool_Check(a)) {
            p = Py_NewRef(a);
            k = Py_NewRef(s_i1);
        } else if (a == Py_None) {
            p = Py_NewRef(s->noparam);
            k = Py_NewRef(Py_None);
        } else if ((PyObject *)t == s->desc_type) { /* a host descriptor in a known state */
            PyObject *e = descriptor_entry(s, a);
            if (e) {
                k = Py_NewRef(PyTuple_GET_ITEM(e, 0));
                p = Py_NewRef(PyTuple_GET_ITEM(e, 1));
                Py_DECREF(e);
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
            if (entries) entries[i] = p; /* (the reference moves there) */
            else Py_DECREF(p);
        } else {
            if (*np >= MAX_PARAMS) { Py_DECREF(p); goto too_many; }
            params[(*np)++] = p;
        }
        continue;
    fail_p:
        Py_XDECREF(p);
        goto fail;
    }
    return key;
too_many:
    PyErr_Format(PyExc_ValueError, "more than %d kernel parameters", MAX_PARAMS);
fail:
    Py_DECREF(key);
    for (Py_ssize_t j = 0; j < *np; j++) Py_DECREF(params[j]);
    *np = 0;
    if (entries)
        for (Py_ssize_t i = 0; i < s->n; i++) Py_CLEAR(entries[i]);
    return NULL;
}

/* fingerprint tags (word 0 of an argument; word 1 below) */
enum { FP_OBJ = 1, FP_INT, FP_TENSOR, FP_I32, FP_ONE, FP_F32, FP_BOOL, FP_NONE };

/* The fingerprint (fp: 2 words an argument), parameters (new references) and device of one
   launch whose arguments all take the inline rules; kobj[i]: the object a FP_OBJ/FP_INT/
   FP_TENSOR word stands for (a new reference in held[], or borrowed from values).
   1: done; 0: an argument needs the full rules (nothing is left held); -1: error. */
static int fingerprint(Signature *s, PyObject *values, uintptr_t *fp, PyObject **kobj,
                       PyObject **held, Py_ssize_t *nheld, PyObject **params, Py_ssize_t *np,
                       int *device) {
    if (!PyTuple_Check(values) || PyTuple_GET_SIZE(values) != s->n) return 0;
    *np = *nheld = 0;
    *device = NO_DEVICE;
    if (s->desc_type) /* a host descriptor takes the full rules: no tensor read twice */
        for (Py_ssize_t i = 0; i < s->n; i++)
            if ((PyObject *)Py_TYPE(PyTuple_GET_ITEM(values, i)) == s->desc_type) return 0;
    for (Py_ssize_t i = 0; i < s->n; i++) {
        PyObject *a = PyTuple_GET_ITEM(values, i);
        PyTypeObject *t = Py_TYPE(a);
        uintptr_t *w = &fp[2 * i];
        kobj[i] = NULL;
        if (s->is_cx[i]) {
            PyObject *v = a;
            if ((PyObject *)t == s->cx_type) {
                if (!(v = PyObject_GetAttr(a, s_value))) goto fail;
                held[(*nheld)++] = v;
            }
            kobj[i] = v;
            int overflow = 0;
            long long x = PyLong_CheckExact(v) ? PyLong_AsLongLongAndOverflow(v, &overflow) : 0;
            if (PyLong_CheckExact(v) && !overflow) { w[0] = FP_INT; w[1] = (uintptr_t)x; }
            else { w[0] = FP_OBJ; w[1] = (uintptr_t)v; } /* by identity: kept alive by the memo */
            continue;
        }
        if (PyLong_CheckExact(a)) {
            int overflow;
            long long v = PyLong_AsLongLongAndOverflow(a, &overflow);
            if (overflow) goto not_here;
            if (v == 1 && !s->nospec[i]) {
                w[0] = FP_ONE; w[1] = 0;
                continue;
            }
            if (v < -2147483648LL || v >= 2147483648LL) goto not_here;
            w[0] = FP_I32;
            w[1] = !s->nospec[i] && !(v & 15);
            params[(*np)++] = Py_NewRef(a);
        } else if (PyFloat_CheckExact(a)) {
            w[0] = FP_F32; w[1] = 0;
            params[(*np)++] = Py_NewRef(a);
        } else if (PyBool_Check(a)) {
            w[0] = FP_BOOL; w[1] = 0;
            params[(*np)++] = Py_NewRef(a);
        } else if (a == Py_None) {
            w[0] = FP_NONE; w[1] = 0;
        } else if (PySet_GET_SIZE(s->torch_types) &&
                   PySet_Contains(s->torch_types, (PyObject *)t) == 1) {
            long dev;
            PyObject *p = NULL, *dt = NULL;
            int r = tensor_parts(a, &dev, &p, &dt);
            if (r <= 0) { if (r < 0) goto fail; goto not_here; }
            unsigned long long ptr = PyLong_AsUnsignedLongLongMask(p);
            held[(*nheld)++] = dt;
            params[(*np)++] = p;
            if (ptr == (unsigned long long)-1 && PyErr_Occurred()) goto fail;
            kobj[i] = dt;
            w[0] = FP_TENSOR;
            w[1] = (uintptr_t)dt | !(ptr & 15); /* objects are aligned: bit 0 is free */
            note_device(device, dev);
        } else {
            goto not_here;
        }
    }
    return 1;
not_here:
    for (Py_ssize_t j = 0; j < *np; j++) Py_DECREF(params[j]);
    for (Py_ssize_t j = 0; j < *nheld; j++) Py_DECREF(held[j]);
    *np = *nheld = 0;
    return 0;
fail:
    for (Py_ssize_t j = 0; j < *np; j++) Py_DECREF(params[j]);
    for (Py_ssize_t j = 0; j < *nheld; j++) Py_DECREF(held[j]);
    *np = *nheld = 0;
    return -1;
}

/* the key tuple a fingerprint stands for (the one key_and_params builds) */
static PyObject *fingerprint_key(Signature *s, const uintptr_t *fp, PyObject **kobj) {
    PyObject *key = PyTuple_New(s->n);
    if (!key) return NULL;
    for (Py_ssize_t i = 0; i < s->n; i++) {
        const uintptr_t *w = &fp[2 * i];
        PyObject *k;
        switch (w[0]) {
        case FP_TENSOR: k = PyTuple_Pack(2, kobj[i], (w[1] & 1) ? Py_True : Py_False); break;
        case FP_I32: k = PyTuple_Pack(2, s_i32, w[1] ? Py_True : Py_False); break;
        case FP_ONE: k = PyLong_FromLong(1); break;
        case FP_F32: k = Py_NewRef(s_fp32); break;
        case FP_BOOL: k = Py_NewRef(s_i1); break;
        case FP_NONE: k = Py_NewRef(Py_None); break;
        default: k = Py_NewRef(kobj[i]); /* FP_OBJ, FP_INT: the constexpr's value */
        }
        if (!k) { Py_DECREF(key); return NULL; }
        PyTuple_SET_ITEM(key, i, k);
    }
    return key;
}

static int same_opts(PyObject *a, PyObject *b) {
    if (a == b) return 1;
    if (!PyTuple_CheckExact(a) || !PyTuple_CheckExact(b) || PyTuple_GET_SIZE(a) != PyTuple_GET_SIZE(b))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(a); i++)
        if (PyTuple_GET_ITEM(a, i) != PyTuple_GET_ITEM(b, i)) return 0;
    return 1;
}

/* the key object of `cache` equal to `ck` whose value is `v` (a new reference; `ck` itself
   when none is) */
static PyObject *stored_key(PyObject *cache, PyObject *ck, PyObject *v) {
    PyObject *dk, *dv;
    Py_ssize_t pos = 0;
    while (PyDict_Next(cache, &pos, &dk, &dv)) {
        if (dv != v) continue;
        Py_INCREF(dk);
        int eq = PyObject_RichCompareBool(dk, ck, Py_EQ);
        if (eq > 0) return dk;
        Py_DECREF(dk);
        if (eq < 0) return NULL;
        break; /* the comparison ran: the dict may have changed */
    }
    return Py_NewRef(ck);
}

static int grid_dim(PyObject *x, unsigned *out) {
    if (!PyLong_CheckExact(x)) return 0;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
    if (overflow || v < 0 || v > 0xFFFFFFFFLL) return 0;
    *out = (unsigned)v;
    return 1;
}

/* a grid of 1-3 ints (a tuple) or an int: 1, else 0 */
static int plain_grid(PyObject *g, unsigned *gd) {
    gd[0] = gd[1] = gd[2] = 1;
    if (PyLong_CheckExact(g)) return grid_dim(g, &gd[0]);
    if (!PyTuple_CheckExact(g) || PyTuple_GET_SIZE(g) < 1 || PyTuple_GET_SIZE(g) > 3) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(g); i++)
        if (!grid_dim(PyTuple_GET_ITEM(g, i), &gd[i])) return 0;
    return 1;
}

/* the grid's three sizes: 1, or 0 when normalize_grid's result is not three ints here */
static int launch_grid(Signature *s, PyObject *grid, PyObject *values, unsigned *gd) {
    if (plain_grid(grid, gd)) return 1;
    PyObject *g = NULL;
    if (PyCallable_Check(grid) && PyTuple_CheckExact(values)) { /* grid(meta): the arguments by name */
        PyObject *meta = PyDict_New();
        if (!meta) return -1;
        for (Py_ssize_t i = 0; i < s->n; i++)
            if (PyDict_SetItem(meta, PyTuple_GET_ITEM(s->names, i), PyTuple_GET_ITEM(values, i)) < 0) {
                Py_DECREF(meta);
                return -1;
            }
        g = PyObject_CallOneArg(grid, meta);
        Py_DECREF(meta);
        if (!g) return -1;
        if (plain_grid(g, gd)) { Py_DECREF(g); return 1; }
    }
    /* everything else (and its messages): normalize_grid */
    PyObject *r = PyObject_CallFunctionObjArgs(s->grid, s->fn, g ? g : grid, values, NULL);
    Py_XDECREF(g);
    if (!r) return -1;
    int ok = PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 3 && grid_dim(PyTuple_GET_ITEM(r, 0), &gd[0])
             && grid_dim(PyTuple_GET_ITEM(r, 1), &gd[1]) && grid_dim(PyTuple_GET_ITEM(r, 2), &gd[2]);
    Py_DECREF(r);
    return ok;
}

/* torch's current stream on `device` (-1 with an error set: failed) */
static unsigned long long raw_stream(long device) {
    T_MARK(t0);
    PyObject *di = PyLong_FromLong(device);
    if (!di) return (unsigned long long)-1;
    PyObject *s = PyObject_CallOneArg(g_raw_stream, di);
    Py_DECREF(di);
    T_ADD(PH_STREAM, t0);
    if (!s) return (unsigned long long)-1;
    unsigned long long v = PyLong_AsUnsignedLongLongMask(s);
    Py_DECREF(s);
    return v;
}

/* whether a runtime argument is a tuple (launched by the Python path) */
static int has_tuple_argument(Signature *s, PyObject *values) {
    if (!PyTuple_Check(values) || PyTuple_GET_SIZE(values) != s->n) return 0;
    for (Py_ssize_t i = 0; i < s->n; i++)
        if (!s->is_cx[i] && PyTuple_Check(PyTuple_GET_ITEM(values, i))) return 1;
    return 0;
}

/* one launch: the launched variant (new reference), None (not handled here: the Python path
   takes it) or NULL (an error) */
static PyObject *launch_core(Signature *self, PyObject *values, PyObject *opts, PyObject *cache,
                             PyObject *grid) {
    PyObject *params[MAX_PARAMS], *held[MAX_PARAMS], *kobj[MAX_PARAMS], *entries[MAX_PARAMS];
    uintptr_t fp[2 * MAX_PARAMS];
    Py_ssize_t np = 0, nheld = 0, nentries = 0;
    int device;
    PyObject *ret = NULL, *ck = NULL, *nat = NULL, *k = NULL, *scratch = NULL;
    if (!PyDict_Check(cache)) Py_RETURN_NONE;
    if (self->n > MAX_PARAMS) Py_RETURN_NONE;
    T_MARK(t0);
    int fast = fingerprint(self, values, fp, kobj, held, &nheld, params, &np, &device);
    if (fast < 0) return NULL;
    if (!fast) { /* the full rules: key tuple built, then looked up */
        if (has_tuple_argument(self, values))
            Py_RETURN_NONE; /* the Python path: its members' devices, its flattening */
        PyObject *key = key_and_params(self, values, params, &np, &device, entries);
        if (!key) return NULL;
        nentries = self->n;
        T_ADD(PH_KEY, t0);
        ck = PyTuple_Pack(2, key, opts);
        Py_DECREF(key);
        if (!ck) goto done;
    } else {
        T_ADD(PH_KEY, t0);
    }
    T_MARK(t1);
    if (device == MIXED_DEVICES) { ret = Py_NewRef(Py_None); goto done; } /* Python's message */
    MemoEntry *hit = NULL;
    if (fast) {
        for (int m = 0; m < MEMO && !hit; m++) {
            MemoEntry *e = &self->memo[m];
            if (e->ck && !memcmp(e->fp, fp, 2 * self->n * sizeof(uintptr_t)) && same_opts(e->opts, opts))
                hit = e;
        }
        if (hit) {
            ck = Py_NewRef(hit->ck); /* held: the lookup may run Python code */
        } else {
            PyObject *key = fingerprint_key(self, fp, kobj);
            if (!key) goto done;
            ck = PyTuple_Pack(2, key, opts);
            Py_DECREF(key);
            if (!ck) goto done;
        }
    }
    k = PyDict_GetItemWithError(cache, ck);
    if (!k) {
        if (PyErr_Occurred()) goto done;
        if (hit) { /* gone from fn.cache: forgotten, so its next entry is remembered anew */
            Py_CLEAR(hit->ck);
            Py_CLEAR(hit->opts);
        }
        ret = Py_NewRef(Py_None);
        goto done;
    }
    Py_INCREF(k); /* held: the calls below run Python code that could drop it from `cache` */
    if (fast && !hit) { /* remember this fingerprint, with fn.cache's own key object if it is
                           found (then later lookups compare by identity) */
        PyObject *stored = stored_key(cache, ck, k);
        if (!stored) goto done;
        MemoEntry *e = &self->memo[self->memo_next++ % MEMO];
        memcpy(e->fp, fp, 2 * self->n * sizeof(uintptr_t));
        Py_INCREF(opts);
        Py_XSETREF(e->opts, opts);
        Py_XSETREF(e->ck, stored);
    }
    nat = PyObject_GetAttr(k, s_native);
    if (!nat) { /* a kernel object without a native handle: the Python path */
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) { PyErr_Clear(); ret = Py_NewRef(Py_None); }
        goto done;
    }
    if (Py_TYPE(nat) != &KernelType) { ret = Py_NewRef(Py_None); goto done; }
    Kernel *kn = (Kernel *)nat;
    T_ADD(PH_LOOKUP, t1);
    T_MARK(t2);
    unsigned gd[3];
    int g = launch_grid(self, grid, values, gd);
    T_ADD(PH_GRID, t2);
    if (g <= 0) { if (!g) ret = Py_NewRef(Py_None); goto done; }
    /* the device and torch's current stream on it */
    unsigned long long stream = 0;
    void *ctx = NULL;
    if (kn->context && p_ctx_get_current && kn->drv == &g_cuda) {
        /* the thread's current context is the variant's: the device it is loaded on is the
           current one (whatever torch's lazily set device says), so no device query */
        T_MARK(t3);
        int bad = p_ctx_get_current(&ctx) || ctx != kn->context;
        T_ADD(PH_DEVICE, t3);
        if (bad || (device != NO_DEVICE && device != kn->device)) {
            ret = Py_NewRef(Py_None); /* the Python path switches device, or binds a context */
            goto done;
        }
        if (g_raw_stream && (stream = raw_stream(kn->device)) == (unsigned long long)-1 &&
            PyErr_Occurred())
            goto done;
    } else if (g_get_device) {
        T_MARK(t3);
        PyObject *d = PyObject_CallNoArgs(g_get_device);
        T_ADD(PH_DEVICE, t3);
        if (!d) goto done;
        long cur = PyLong_AsLong(d);
        Py_DECREF(d);
        if (cur == -1 && PyErr_Occurred()) goto done;
        if ((device != NO_DEVICE && device != cur) || kn->device != cur) {
            ret = Py_NewRef(Py_None); /* another device: the Python path switches to it */
            goto done;
        }
        if ((stream = raw_stream(cur)) == (unsigned long long)-1 && PyErr_Occurred())
            goto done;
    } else if (device != NO_DEVICE && device != kn->device) {
        ret = Py_NewRef(Py_None);
        goto done;
    }
    if (gd[0] && gd[1] && gd[2]) {
        uint64_t slots[MAX_PARAMS];
        if (kn->maps) { /* host descriptors' tensor maps follow the parameters */
            PyObject *m;
            if (nentries) { /* (the arguments' entries: their states' maps) */
                PyObject *ents = PyTuple_New(nentries);
                if (!ents) goto done;
                for (Py_ssize_t j = 0; j < nentries; j++)
                    PyTuple_SET_ITEM(ents, j, Py_NewRef(entries[j] ? entries[j] : Py_None));
                m = PyObject_CallFunctionObjArgs(kn->maps, self->fn, values, ents, NULL);
                Py_DECREF(ents);
            } else {
                m = PyObject_CallFunctionObjArgs(kn->maps, self->fn, values, NULL);
            }
            if (!m) goto done;
            PyObject *fast = PySequence_Fast(m, "maps() must return a sequence");
            Py_DECREF(m);
            if (!fast) goto done;
            Py_ssize_t nm = PySequence_Fast_GET_SIZE(fast);
            if (np + nm > MAX_PARAMS) {
                Py_DECREF(fast);
                PyErr_Format(PyExc_ValueError, "more than %d kernel parameters", MAX_PARAMS);
                goto done;
            }
            for (Py_ssize_t j = 0; j < nm; j++)  /* held in params[] until `done` */
                params[np++] = Py_NewRef(PySequence_Fast_GET_ITEM(fast, j));
            Py_DECREF(fast);
        }
        if (kn->scratch) { /* global scratch, the last parameter: (buffer, address) */
            scratch = PyObject_CallFunction(kn->scratch, "KK",
                                            (unsigned long long)gd[0] * gd[1] * gd[2], stream);
            if (!scratch) goto done;
            if (!PyTuple_Check(scratch) || PyTuple_GET_SIZE(scratch) != 2) {
                PyErr_SetString(PyExc_TypeError, "scratch() must return (buffer, address)");
                goto done;
            }
            if (np >= MAX_PARAMS) {
                PyErr_Format(PyExc_ValueError, "more than %d kernel parameters", MAX_PARAMS);
                goto done;
            }
            params[np++] = Py_NewRef(PyTuple_GET_ITEM(scratch, 1));
        }
        T_MARK(t5);
        int rc = pack_all(kn, params, np, slots);
        T_ADD(PH_PACK, t5);
        if (rc < 0 || do_launch(kn, gd[0], gd[1], gd[2], (void *)(uintptr_t)stream, slots) < 0)
            goto done;
    }
    ret = Py_NewRef(k);
done:
    Py_XDECREF(k);
    Py_XDECREF(nat);
    Py_XDECREF(scratch); /* the buffer lives until the launch is queued */
    Py_XDECREF(ck);
    for (Py_ssize_t j = 0; j < np; j++) Py_DECREF(params[j]);
    for (Py_ssize_t j = 0; j < nheld; j++) Py_DECREF(held[j]);
    for (Py_ssize_t j = 0; j < nentries; j++) Py_XDECREF(entries[j]);
    return ret;
}

static PyObject *Signature_key_and_params(Signature *self, PyObject *values) {
    PyObject *params[MAX_PARAMS];
    Py_ssize_t np;
    int device;
    PyObject *key = key_and_params(self, values, params, &np, &device, NULL);
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

/* fingerprint_key(values) -> the key the fingerprint path builds (None: it does not apply) */
static PyObject *Signature_fingerprint_key(Signature *self, PyObject *values) {
    PyObject *params[MAX_PARAMS], *held[MAX_PARAMS], *kobj[MAX_PARAMS];
    uintptr_t fp[2 * MAX_PARAMS];
    Py_ssize_t np = 0, nheld = 0;
    int device;
    if (self->n > MAX_PARAMS) Py_RETURN_NONE;
    int r = fingerprint(self, values, fp, kobj, held, &nheld, params, &np, &device);
    if (r <= 0) { if (r < 0) return NULL; Py_RETURN_NONE; }
    PyObject *key = fingerprint_key(self, fp, kobj);
    for (Py_ssize_t j = 0; j < np; j++) Py_DECREF(params[j]);
    for (Py_ssize_t j = 0; j < nheld; j++) Py_DECREF(held[j]);
    return key;
}

/* launch(values, opts, cache, grid) -> the loaded variant, launched; None: not handled here */
static PyObject *Signature_launch(Signature *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "launch(values, opts, cache, grid)");
        return NULL;
    }
    T_MARK(t0);
    PyObject *r = launch_core(self, args[0], args[1], args[2], args[3]);
    if (r && r != Py_None) { T_ADD(PH_TOTAL, t0); T_COUNT(); }
    return r;
}

static PyObject *Signature_call(Signature *self, PyObject *args, PyObject *kw) {
    if (kw && PyDict_GET_SIZE(kw)) {
        PyErr_SetString(PyExc_TypeError, "launch(values, opts, cache, grid) takes no keywords");
        return NULL;
    }
    return Signature_launch(self, PySequence_Fast_ITEMS(args), PyTuple_GET_SIZE(args));
}
