/* The native launcher's Launch (included once, by launch.c, after signature.h): `sig[grid]`,
   what `kernel[grid]` returns, called with a launch's arguments; the binding in C (the
   generated binder's result for the calls it takes); the Signature's type. */

/* ---- Launch: sig[grid], what kernel[grid] returns ----------------------------------------- */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Signature *sig;
    PyObject *grid;
} Launch;

static PyTypeObject LaunchType;
static PyObject *Launch_new_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                       PyObject *kwnames);

static PyObject *Signature_subscript(Signature *self, PyObject *grid) {
    if (self->binder == Py_None || self->run == Py_None) {
        PyErr_SetString(PyExc_TypeError, "this Signature has no binder and run: no sig[grid]");
        return NULL;
    }
    if (grid == self->last_grid) /* the same grid object (a literal tuple): its Launch */
        return Py_NewRef(self->last_launch);
    Launch *l = PyObject_GC_New(Launch, &LaunchType);
    if (!l) return NULL;
    l->vectorcall = Launch_new_vectorcall;
    l->sig = (Signature *)Py_NewRef(self);
    l->grid = Py_NewRef(grid);
    PyObject_GC_Track(l);
    if (PyTuple_CheckExact(grid)) { /* kept for the next sig[grid] of this tuple */
        Py_XSETREF(self->last_grid, Py_NewRef(grid));
        Py_XSETREF(self->last_launch, Py_NewRef((PyObject *)l));
    }
    return (PyObject *)l;
}

/* run(fn, grid, args, kwargs, True, False): the Python path, with this call's arguments */
static PyObject *launch_in_python(Launch *l, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
    PyObject *a = PyTuple_New(nargs), *kw = PyDict_New(), *r = NULL;
    if (!a || !kw) goto out;
    for (Py_ssize_t i = 0; i < nargs; i++) PyTuple_SET_ITEM(a, i, Py_NewRef(args[i]));
    for (Py_ssize_t i = 0; kwnames && i < PyTuple_GET_SIZE(kwnames); i++)
        if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) goto out;
    r = PyObject_CallFunctionObjArgs(l->sig->run, l->sig->fn, l->grid, a, kw, Py_True, Py_False,
                                     NULL); /* launch, not natively again */
out:
    Py_XDECREF(a);
    Py_XDECREF(kw);
    return r;
}

/* the index of `name` in the tuple `names`, or -1 */
static Py_ssize_t name_index(PyObject *names, PyObject *name) {
    Py_ssize_t m = PyTuple_GET_SIZE(names);
    for (Py_ssize_t i = 0; i < m; i++) /* interned names: identity first */
        if (PyTuple_GET_ITEM(names, i) == name) return i;
    for (Py_ssize_t i = 0; i < m; i++)
        if (PyUnicode_Compare(PyTuple_GET_ITEM(names, i), name) == 0) return i;
    if (PyErr_Occurred()) PyErr_Clear();
    return -1;
}

/* what the generated binder returns, (values, opts), for a call it accepts; NULL without an
   error: a call it would refuse or one this does not take (the binder raises its message) */
static PyObject *c_bind(Signature *s, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
    Py_ssize_t n = s->n, no;
    if (!s->own_option || nargs > n) return NULL;
    no = PyTuple_GET_SIZE(s->options);
    PyObject *values = PyTuple_New(n), *opts = PyTuple_New(no);
    if (!values || !opts) goto fail;
    for (Py_ssize_t i = 0; i < nargs; i++) PyTuple_SET_ITEM(values, i, Py_NewRef(args[i]));
    for (Py_ssize_t k = 0; kwnames && k < PyTuple_GET_SIZE(kwnames); k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k), *v = args[nargs + k];
        Py_ssize_t i = name_index(s->names, name);
        if (i >= 0) {
            if (PyTuple_GET_ITEM(values, i)) goto refuse; /* given twice */
            PyTuple_SET_ITEM(values, i, Py_NewRef(v));
            continue;
        }
        Py_ssize_t j = name_index(s->options, name);
        if (j >= 0 && s->own_option[j]) {
            if (PyTuple_GET_ITEM(opts, j)) goto refuse;
            PyTuple_SET_ITEM(opts, j, Py_NewRef(v));
            continue;
        }
        if (name_index(s->ignored, name) < 0) goto refuse; /* unexpected */
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!PyTuple_GET_ITEM(values, i)) {
            PyObject *d = PyTuple_GET_ITEM(s->defaults, i);
            if (d == s->required) goto refuse; /* missing */
            PyTuple_SET_ITEM(values, i, Py_NewRef(d));
        }
    for (Py_ssize_t j = 0; j < no; j++)
        if (!PyTuple_GET_ITEM(opts, j)) PyTuple_SET_ITEM(opts, j, Py_NewRef(Py_None));
    PyObject *r = PyTuple_Pack(2, values, opts);
    Py_DECREF(values);
    Py_DECREF(opts);
    return r;
refuse:
fail:
    Py_XDECREF(values);
    Py_XDECREF(opts);
    return NULL;
}

/* bind(*args, **kwargs) -> (values, opts): the C binding, else the generated binder's */
static PyObject *Signature_bind(Signature *self, PyObject *const *args, size_t nargsf,
                                PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *r = c_bind(self, args, nargs, kwnames);
    if (r || PyErr_Occurred()) return r;
    return PyObject_Vectorcall(self->binder, args, nargs, kwnames);
}

static PyObject *Launch_vectorcall(Launch *l, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames) {
    Signature *s = l->sig;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    T_MARK(t0);
    PyObject *bound = c_bind(s, args, nargs, kwnames);
    if (!bound && !PyErr_Occurred()) bound = PyObject_Vectorcall(s->binder, args, nargs, kwnames);
    T_ADD(PH_BIND, t0);
    if (!bound) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) return NULL;
        PyErr_Clear(); /* a bad call: the Python path says so, located */
        return launch_in_python(l, args, nargs, kwnames);
    }
    if (!PyTuple_CheckExact(bound) || PyTuple_GET_SIZE(bound) != 2) {
        Py_DECREF(bound);
        return launch_in_python(l, args, nargs, kwnames);
    }
    PyObject *cache = PyObject_GetAttr(s->fn, s_cache);
    if (!cache) { Py_DECREF(bound); return NULL; }
    g_last_err = 0;
    g_last_drv = NULL;
    PyObject *r = launch_core(s, PyTuple_GET_ITEM(bound, 0), PyTuple_GET_ITEM(bound, 1), cache,
                              l->grid);
    Py_DECREF(cache);
    Py_DECREF(bound);
    if (!r) {
        if (g_last_drv != &g_cuda || g_last_err != CUDA_ERROR_INVALID_CONTEXT ||
            !g_cuda.errtype || !PyErr_ExceptionMatches(g_cuda.errtype))
            return NULL;
        PyErr_Clear(); /* no context in this thread: the Python path binds one */
        return launch_in_python(l, args, nargs, kwnames);
    }
    if (r == Py_None) {
        Py_DECREF(r);
        return launch_in_python(l, args, nargs, kwnames);
    }
    T_ADD(PH_TOTAL, t0);
    T_COUNT();
    return r;
}

static PyObject *Launch_new_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                       PyObject *kwnames) {
    return Launch_vectorcall((Launch *)self, args, nargsf, kwnames);
}

static int Launch_traverse(Launch *l, visitproc visit, void *arg) {
    Py_VISIT(l->sig);
    Py_VISIT(l->grid);
    return 0;
}

static int Launch_clear(Launch *l) {
    Py_CLEAR(l->sig);
    Py_CLEAR(l->grid);
    return 0;
}

static void Launch_dealloc(Launch *l) {
    PyObject_GC_UnTrack(l);
    Launch_clear(l);
    PyObject_GC_Del(l);
}

static PyTypeObject LaunchType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tilework_native.Launch",
    .tp_basicsize = sizeof(Launch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_vectorcall_offset = offsetof(Launch, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dealloc = (destructor)Launch_dealloc,
    .tp_traverse = (traverseproc)Launch_traverse,
    .tp_clear = (inquiry)Launch_clear,
    .tp_doc = "sig[grid]: called with a launch's arguments, launches as kernel[grid](...)",
};

static PyMethodDef Signature_methods[] = {
    {"key_and_params", (PyCFunction)Signature_key_and_params, METH_O,
     "(key, params, device) of one launch's bound arguments"},
    {"bind", (PyCFunction)(void (*)(void))Signature_bind, METH_FASTCALL | METH_KEYWORDS,
     "bind(*args, **kwargs) -> (values, opts), as the kernel's binder"},
    {"fingerprint_key", (PyCFunction)Signature_fingerprint_key, METH_O,
     "the key the fingerprint path builds for these bound arguments (None: not applicable)"},
    {"launch", (PyCFunction)(void (*)(void))Signature_launch, METH_FASTCALL,
     "launch(values, opts, cache, grid) -> the launched variant, or None"},
    {NULL}};

static PyMappingMethods Signature_mapping = {.mp_subscript = (binaryfunc)Signature_subscript};

static PyTypeObject SignatureType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tilework_native.Signature",
    .tp_basicsize = sizeof(Signature),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Signature_init,
    .tp_dealloc = (destructor)Signature_dealloc,
    .tp_traverse = (traverseproc)Signature_traverse,
    .tp_clear = (inquiry)Signature_clear,
    .tp_methods = Signature_methods,
    .tp_call = (ternaryfunc)Signature_call,
    .tp_as_mapping = &Signature_mapping,
};
