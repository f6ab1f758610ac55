/* Parameter packing of the native launcher (included once, by launch.c): each parameter's
   value at its kind's width in an 8-byte slot (CUDA), or all of them in one naturally
   aligned buffer (HIP); the kinds are abi.py's. */

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
    case 'T': { /* a tensor map: its 128 bytes (a bytes object the caller holds) by address */
        if (!PyBytes_Check(v) || PyBytes_GET_SIZE(v) != 128) {
            PyErr_SetString(PyExc_TypeError, "a tensor map parameter is 128 bytes");
            return -1;
        }
        *slot = (uint64_t)(uintptr_t)PyBytes_AS_STRING(v);
        return 0;
    }
    }
    PyErr_Format(PyExc_ValueError, "unknown parameter kind %c", kind);
    return -1;
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
   struct's '@' format), zero-padded to a multiple of `align` (abi.kernarg_size: 4 for HIP);
   returns its size */
static size_t pack_buffer(const char *kinds, Py_ssize_t n, const uint64_t *slots,
                          size_t align, unsigned char *buf) {
    size_t off = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t w = (size_t)kind_size(kinds[i]), start = (off + w - 1) / w * w;
        memset(buf + off, 0, start - off); /* the padding, zero as struct.pack's */
        off = start;
        memcpy(buf + off, &slots[i], w);
        off += w;
    }
    size_t end = (off + align - 1) / align * align;
    memset(buf + off, 0, end - off);
    return end;
}

