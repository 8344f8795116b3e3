# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled half of the fused CPU backend: program objects and the block VM driver.

The VM itself (casts, where, gathers, reductions, the thread pool) is C in
``_cpu_vm.h``; this module turns the Python-side program description into C
structs, computes the iteration layout of a call, and runs it with the GIL released.
"""
cimport numpy as cnp
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_FromStringAndSize
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.exc cimport PyErr_Occurred
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_New
from cpython.pythread cimport PyThread_get_thread_ident
from libc.math cimport fabs
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

cdef extern from "<sched.h>" nogil:
    int sched_yield()

from cpython.ref cimport Py_REFCNT

cnp.import_array()

cdef extern from "_cpu_vm.h" nogil:
    int lz_prefault(char *p, cnp.npy_intp nbytes)
    ctypedef void (*lz_cast_t)(const char *s, cnp.npy_intp ss, char *d, cnp.npy_intp n)
    ctypedef int (*lz_loop_t)(void *ctx, char *const *data, const cnp.npy_intp *dims,
                              const cnp.npy_intp *strides, void *aux)
    ctypedef struct lz_call_info:
        void *strided_loop
        void *context
        void *auxdata
        cnp.npy_bool requires_pyapi
        cnp.npy_bool no_floatingpoint_errors
    ctypedef struct lz_instr:
        int kind, nin
        int in_ "in"[3]
        int out, reg
        cnp.npy_intp osize
        lz_loop_t loop
        void *ctx
        void *aux
        lz_cast_t cast
        int which, spare_reg
        cnp.npy_intp spare_size
        int clears_fpe
        int cmp
    int lz_loop_clears_fpe(lz_loop_t loop, void *ctx, void *aux, char *const *data,
                           const cnp.npy_intp *strides, cnp.npy_intp n)
    ctypedef void (*lz_loop_fn)(char **args, const cnp.npy_intp *strides, cnp.npy_intp n)
    enum: LZ_LOOP_MAX_IN
    enum: LZ_MAX_RUNS
    ctypedef struct lz_loop_run:
        lz_loop_fn fn
        int first, end, nin
        int in_ "in"[LZ_LOOP_MAX_IN]
        cnp.npy_intp isz[LZ_LOOP_MAX_IN]
    ctypedef struct lz_prog:
        int ninstr
        lz_instr *instr
        int nruns
        lz_loop_run runs[LZ_MAX_RUNS]
        int ninputs, nscalars, nvals, nregs
        int *input_val
        cnp.npy_intp *input_isz
        int *scalar_val
        int result_val, red_kind, red_type, red_pre
        cnp.npy_intp B, esz
        int prefetch
    ctypedef struct lz_run
    ctypedef struct lz_field:
        const lz_prog *F
        lz_run *Rf
        char *base
        cnp.npy_intp s0, s1, osize
        int ntops
        int top_input[16]
        int di[16]
        int dj[16]
        int di0, di1, dj0, dj1
    int LZ_FIELD_TOPS
    ctypedef struct lz_run:
        int mode, nO, nI
        cnp.npy_intp Oshape[64]
        cnp.npy_intp Ishape[64]
        cnp.npy_intp Osz, Isz
        char **base
        cnp.npy_intp *Ostr
        cnp.npy_intp *Istr
        cnp.npy_intp *dstride
        char *scalars
        char *out
        cnp.npy_intp out_ostride
        cnp.npy_intp nb, cut, nchunk, chunk_rows
        cnp.npy_intp nrows, row_len, rows_per_item
        double *pd
        double *pm2
        cnp.npy_int64 *pi
        cnp.npy_int64 *pidx
        cnp.npy_uint64 *pu
        double *rd
        double *rm2
        cnp.npy_int64 *ri
        cnp.npy_int64 *ridx
        cnp.npy_uint64 *ru
        int error
        int check_signals
        unsigned char *fpe
        int out_read
        char *wb
        int wb_nd
        cnp.npy_intp wb_shape[64]
        cnp.npy_intp wb_str[64]
        cnp.npy_intp wb_rows, wb_rowsize, wb_chunk, wb_back, wb_fwd
        char *wb_side
        cnp.npy_int64 *progress
        int nfields
        lz_field *fields
        cnp.npy_intp rows, cols
        const cnp.npy_bool *mask
    ctypedef struct lz_enum_entry:
        const char *name
        int value
    # the X-macro tables of _cpu_vm.h (C arrays, declared as pointers: only indexed here)
    const lz_enum_entry *lz_dtype_codes
    const lz_enum_entry *lz_modes
    const lz_enum_entry *lz_red_kinds
    const lz_enum_entry *lz_red_types
    const lz_enum_entry *lz_folds
    int lz_casts_complete()
    lz_cast_t lz_get_cast(int dst, int src)
    lz_cast_t lz_get_imag(int src)
    lz_cast_t lz_get_sqrt(int type)
    lz_cast_t lz_get_sqrt_abs(int type)
    int lz_execute(const lz_prog *P, lz_run *R, int nthreads)
    void lz_publish_loop(lz_prog *P, int k, lz_loop_fn fn)
    int lz_pool_started()
    cnp.npy_int64 lz_progress(cnp.npy_int64 *progress)
    cnp.npy_intp LZ_GATHER
    int LZ_SCALAR_BYTES
    int VK_UFUNC, VK_CAST, VK_WHERE, VK_CABS_CMP
    int MODE_RED_A

cdef const char *CAPSULE_NAME = b"numpy_1.24_ufunc_call_info"

import threading

import numpy as _np

# Python runs signal handlers in the main thread only: a call from there polls for them.
cdef unsigned long _main_thread = threading.main_thread().ident


cdef dict _enum_dict(const lz_enum_entry *table):
    """{name: value} of one X-macro table of _cpu_vm.h (its list ends with a NULL name)."""
    cdef int i = 0
    names = {}
    while table[i].name != NULL:
        names[table[i].name.decode()] = table[i].value
        i += 1
    return names


# The numbers the Python side passes to VMProgram and execute, defined once in _cpu_vm.h.
#: NumPy dtype name -> type code (cast operands), in the C enum's order
DTYPE_CODES = _enum_dict(lz_dtype_codes)
#: execution mode of a call: "elementwise", "slot_major" (mode A), "reduce_major" (mode B)
MODES = _enum_dict(lz_modes)
#: reduction kind of the sink ("none", "sum", "prod", ..., "var")
REDUCTION_KINDS = _enum_dict(lz_red_kinds)
#: name of the (canonical) dtype a reduction kernel reads -> its value-type code
REDUCTION_TYPES = _enum_dict(lz_red_types)
#: elementwise op folded into a reduction kernel: "none", "abs", "square"
FOLDS = _enum_dict(lz_folds)
#: the limits of compiled loops (cpu_loops.py): operands of a loop, runs of a program
LOOP_MAX_OPERANDS = LZ_LOOP_MAX_IN
LOOP_MAX_RUNS = LZ_MAX_RUNS
#: bytes per scalar operand in execute's ``scalars``
SCALAR_BYTES = LZ_SCALAR_BYTES

if not lz_casts_complete():
    raise ImportError("_cpu_vm.h: a (dst, src) pair of LZ_DTYPES has no cast in lz_casts")


# NumPy's PyArrayMethod_Context (numpy/dtype_api.h): a call-info capsule's ``context``
ctypedef struct _method_context:
    void *caller
    void *method
    cnp.PyArray_Descr **descriptors

#: (loop address, ArrayMethod address) -> whether it clears the floating-point status
cdef dict _clears_fpe = {}


def loop_clears_fpe(capsule, int nargs, int nin):
    """Whether the strided loop of a filled ufunc call-info capsule (``nargs`` operands, the
    first ``nin`` inputs) clears the floating-point status when it ends, as NumPy's float
    min/max, comparison, ``abs`` and ``negative`` loops do on some paths
    (``npy_clear_floatstatus_barrier``): tried once per loop on ones of its operands' dtypes
    with FE_INVALID raised first, over 1 and 64 elements, each input contiguous or at stride
    0 (NumPy's loops take other paths for each). The VM then tests the status before such an
    instruction (an earlier instruction's flag would be lost, where NumPy, which tests after
    each ufunc, reports it)."""
    cdef lz_call_info *ci = <lz_call_info *>PyCapsule_GetPointer(capsule, CAPSULE_NAME)
    cdef _method_context *mc = <_method_context *>ci.context
    cdef char *data[4]
    cdef cnp.npy_intp strides[4]
    cdef cnp.ndarray a
    cdef int i, r, zero_mask
    cdef cnp.npy_intp n
    # (NumPy 2 wraps its legacy loops: one strided_loop serves many ufuncs, the ufunc's own
    # loop in the auxdata; the method names the ufunc's loop for these dtypes)
    key = (<size_t>ci.strided_loop, <size_t>mc.method)
    found = _clears_fpe.get(key)
    if found is not None:
        return found
    if nargs > 4:
        raise ValueError(f"loop_clears_fpe: {nargs} operands")
    operands = [_np.ones(64, dtype=<object>mc.descriptors[i]) for i in range(nargs)]
    clears = False
    for n in (1, 64):
        for zero_mask in range(1 << nin):
            for i in range(nargs):
                a = operands[i]
                data[i] = <char *>cnp.PyArray_DATA(a)
                strides[i] = 0 if i < nin and (zero_mask >> i) & 1 else a.itemsize
            r = lz_loop_clears_fpe(<lz_loop_t>ci.strided_loop, ci.context, ci.auxdata, data,
                                   strides, n)
            if r < 0:
                raise RuntimeError("loop_clears_fpe: the loop failed on ones")
            clears = clears or bool(r)
    _clears_fpe[key] = clears
    return clears


def loop_flags(capsule):
    """(requires_pyapi, no_floatingpoint_errors) of a filled ufunc call-info capsule."""
    cdef lz_call_info *ci = <lz_call_info *>PyCapsule_GetPointer(capsule, CAPSULE_NAME)
    return bool(ci.requires_pyapi), bool(ci.no_floatingpoint_errors)


cdef class VMProgram:
    """A compiled VM program: C instruction array plus the objects that keep it valid."""

    cdef lz_prog P
    cdef list keep
    cdef readonly int nregs, red_kind, red_type, red_pre
    cdef readonly bint prefetch
    cdef readonly cnp.npy_intp block

    def __cinit__(self):
        memset(&self.P, 0, sizeof(lz_prog))
        self.keep = []

    def __init__(self, list instrs, list inputs, list scalars, int nvals, int nregs,
                 int result_val, int red_kind, int red_type, cnp.npy_intp block, int red_pre=0,
                 cnp.npy_intp esz=8, bint prefetch=False):
        cdef lz_prog *P = &self.P
        cdef lz_instr *ins
        cdef lz_call_info *ci
        cdef int j, a
        P.ninstr = len(instrs)
        P.instr = <lz_instr *>malloc(sizeof(lz_instr) * (P.ninstr + 1))
        P.ninputs = len(inputs)
        P.input_val = <int *>malloc(sizeof(int) * (P.ninputs + 1))
        P.input_isz = <cnp.npy_intp *>malloc(sizeof(cnp.npy_intp) * (P.ninputs + 1))
        P.nscalars = len(scalars)
        P.scalar_val = <int *>malloc(sizeof(int) * (P.nscalars + 1))
        if not (P.instr and P.input_val and P.input_isz and P.scalar_val):
            raise MemoryError()
        memset(P.instr, 0, sizeof(lz_instr) * (P.ninstr + 1))
        for j, spec in enumerate(instrs):
            kind, out, args, reg, osize, extra = spec
            ins = &P.instr[j]
            ins.nin = len(args)
            for a in range(ins.nin):
                ins.in_[a] = args[a]
            ins.out, ins.reg, ins.osize = out, reg, osize
            ins.which = -1
            if kind == "ufunc2":                # (capsule, output kept, spare register, its itemsize)
                extra, ins.which, ins.spare_reg, ins.spare_size = extra
                if not (0 <= ins.which <= 1 and 0 <= ins.spare_reg < nregs):
                    raise ValueError(f"ufunc2 instruction {j}: output {ins.which}, spare r{ins.spare_reg}")
            if kind in ("ufunc", "ufunc2"):
                ci = <lz_call_info *>PyCapsule_GetPointer(extra, CAPSULE_NAME)
                if ci.strided_loop == NULL or ci.requires_pyapi:
                    raise TypeError("ufunc loop unusable without the GIL")
                ins.kind = VK_UFUNC
                ins.loop = <lz_loop_t>ci.strided_loop
                ins.ctx = ci.context
                ins.aux = ci.auxdata
                ins.clears_fpe = loop_clears_fpe(extra, ins.nin + (2 if kind == "ufunc2" else 1), ins.nin)
                self.keep.append(extra)
            elif kind == "cabs_cmp":            # (absolute's capsule, comparison 0-3)
                extra, ins.cmp = extra
                ci = <lz_call_info *>PyCapsule_GetPointer(extra, CAPSULE_NAME)
                if ci.strided_loop == NULL or ci.requires_pyapi or not 0 <= ins.cmp <= 3 \
                        or ins.nin != 2:
                    raise ValueError(f"cabs_cmp instruction {j}")
                ins.kind = VK_CABS_CMP
                ins.loop = <lz_loop_t>ci.strided_loop
                ins.ctx = ci.context
                ins.aux = ci.auxdata
                self.keep.append(extra)
            elif kind == "cast":
                ins.kind = VK_CAST
                ins.cast = lz_get_cast(extra[0], extra[1])
            elif kind == "imag":                # the imaginary part of complex type code extra
                ins.kind = VK_CAST
                ins.cast = lz_get_imag(extra)
            elif kind == "sqrt" or kind == "sqrt_abs":   # lazyarr's own loops, type code extra
                ins.kind = VK_CAST
                ins.cast = lz_get_sqrt(extra) if kind == "sqrt" else lz_get_sqrt_abs(extra)
                if ins.cast == NULL:
                    raise ValueError(f"{kind} instruction {j}: no loop for type code {extra}")
            elif kind == "where":
                ins.kind = VK_WHERE
            else:
                raise ValueError(kind)
        for j, (val, isz) in enumerate(inputs):
            P.input_val[j] = val
            P.input_isz[j] = isz
        for j, val in enumerate(scalars):
            P.scalar_val[j] = val
        P.nvals, P.nregs, P.result_val = nvals, nregs, result_val
        P.red_kind, P.red_type, P.B, P.red_pre = red_kind, red_type, block, red_pre
        P.esz = esz
        P.prefetch = prefetch
        self.prefetch = prefetch
        self.red_pre = red_pre
        self.nregs, self.red_kind, self.red_type, self.block = nregs, red_kind, red_type, block

    @property
    def has_loop(self):
        """Whether every run's compiled loop is set (set_loop), and there are runs."""
        cdef int k
        return self.P.nruns > 0 and all(self.P.runs[k].fn != NULL for k in range(self.P.nruns))

    def set_runs(self, list runs):
        """The runs of instructions ``(first, end)``, in order and apart, that compiled loops
        may take (cpu_loops.plan); before any call."""
        cdef int k
        if len(runs) > LZ_MAX_RUNS or self.P.nruns:
            raise ValueError("runs")
        for k, (first, end) in enumerate(runs):
            if not (0 <= first < end <= self.P.ninstr) or k and first < self.P.runs[k - 1].end:
                raise ValueError(f"run {first}..{end}")
            self.P.runs[k].first, self.P.runs[k].end = first, end
        self.P.nruns = len(runs)

    def set_loop(self, int k, size_t address, list operands, list itemsizes, object keep):
        """Run ``k``'s instructions as one compiled loop from now on (cpu_loops.py):
        ``address`` of a ``void(char **args, npy_intp *strides, npy_intp n)``, the values it
        reads (``operands``, then it writes the run's last value), their itemsizes; ``keep``
        holds the code alive. Set once; a call running on another thread sees the loop from
        its next block, whole or not at all."""
        cdef int a
        if not 0 <= k < self.P.nruns or self.P.runs[k].fn != NULL or not operands or \
                len(operands) > LZ_LOOP_MAX_IN or len(itemsizes) != len(operands) or address == 0:
            raise ValueError("no loop for this run")
        for a in range(len(operands)):
            if not 0 <= operands[a] < self.P.nvals:
                raise ValueError(f"operand {operands[a]}")
            self.P.runs[k].in_[a] = operands[a]
            self.P.runs[k].isz[a] = itemsizes[a]
        self.P.runs[k].nin = len(operands)
        self.keep.append(keep)
        lz_publish_loop(&self.P, k, <lz_loop_fn>address)

    def __dealloc__(self):
        free(self.P.instr)
        free(self.P.input_val)
        free(self.P.input_isz)
        free(self.P.scalar_val)


cdef int _raise_pending() except -1:
    """Propagate an exception a NumPy loop set (through the GIL) while the VM ran."""
    if PyErr_Occurred():
        return -1
    return 0


cdef void _set_writeback(lz_run *R, tuple writeback):
    cdef cnp.ndarray target = writeback[0]
    cdef int d
    R.wb = <char *>cnp.PyArray_DATA(target)
    R.wb_nd = target.ndim
    for d in range(target.ndim):
        R.wb_shape[d], R.wb_str[d] = target.shape[d], target.strides[d]
    R.wb_rows = target.shape[0]
    R.wb_rowsize = target.size // target.shape[0] if target.shape[0] else 0
    R.wb_chunk, R.wb_back, R.wb_fwd = writeback[1], writeback[2], writeback[3]
    R.wb_side = <char *>_ptr(writeback[4])


cdef inline void *_ptr(object a):
    if a is None:
        return NULL
    return cnp.PyArray_DATA(<cnp.ndarray>a)


cdef void _set_partials(lz_run *R, dict a):
    R.pd, R.pm2 = <double *>_ptr(a.get("pd")), <double *>_ptr(a.get("pm2"))
    R.pi, R.pidx = <cnp.npy_int64 *>_ptr(a.get("pi")), <cnp.npy_int64 *>_ptr(a.get("pidx"))
    R.pu = <cnp.npy_uint64 *>_ptr(a.get("pu"))
    R.rd, R.rm2 = <double *>_ptr(a.get("rd")), <double *>_ptr(a.get("rm2"))
    R.ri, R.ridx = <cnp.npy_int64 *>_ptr(a.get("ri")), <cnp.npy_int64 *>_ptr(a.get("ridx"))
    R.ru = <cnp.npy_uint64 *>_ptr(a.get("ru"))


def progress_of(cnp.ndarray progress):
    """How many elements a pipelined run (``execute(..., progress=)``) has written: a read
    with acquire order, so that those elements are seen written."""
    return lz_progress(<cnp.npy_int64 *>cnp.PyArray_DATA(progress))


def wait_progress(cnp.ndarray progress, cnp.npy_int64 want, double seconds):
    """Wait, with the GIL released, until a pipelined run has written ``want`` elements or
    ``seconds`` have passed (the caller's loop then checks the worker and signals); returns
    :func:`progress_of`. The thread yields between reads (the kernel's thread, on another
    core or this one, answers within microseconds; an event's timed wait sleeps ~60 us)."""
    cdef cnp.npy_int64 *p = <cnp.npy_int64 *>cnp.PyArray_DATA(progress)
    cdef cnp.npy_int64 v
    cdef timespec t0, t
    with nogil:
        clock_gettime(CLOCK_MONOTONIC, &t0)
        while True:
            v = lz_progress(p)
            if v >= want:
                break
            clock_gettime(CLOCK_MONOTONIC, &t)
            if (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 > seconds:
                break
            sched_yield()
    return v


cdef int _pool_threads = 1


def set_pool_threads(int n):
    """The thread count of the bound runners' parallel calls (cpu_fused.set_num_threads)."""
    global _pool_threads
    _pool_threads = n


def pool_helpers():
    """How many helper threads the pool has started (tests)."""
    return lz_pool_started()


cpdef object execute(VMProgram prog, list inputs, bytes scalars, tuple shape, tuple order,
                     int n_outer, int mode, int nthreads, out=None, dict partials=None,
                     cnp.npy_intp nb=0, cnp.npy_intp nchunk=1, cnp.npy_intp chunk_rows=0,
                     bytearray fpe=None, tuple writeback=None, cnp.ndarray progress=None,
                     bint out_read=True, cnp.npy_intp cut=0, tuple fields=None,
                     cnp.npy_intp out_ostride=0, cnp.ndarray mask=None):
    """Run ``prog`` over the iteration space ``shape``.

    ``order`` lists the dims of ``shape``: the first ``n_outer`` form the outer index,
    the rest the inner index (both C order). ``inputs`` are arrays broadcastable to
    ``shape``; ``scalars`` holds SCALAR_BYTES per scalar operand. Elementwise mode writes
    ``out`` (C-contiguous, ``shape``); reduction modes fill the partial/result arrays of
    ``partials``, named by their lz_run fields (``pd``, ``pm2``, ``pi``, ``pidx``, ``pu``,
    ``rd``, ``rm2``, ``ri``, ``ridx``, ``ru``; a missing one is NULL).
    ``nb`` is the block count per slot (mode A: ``ceil(cut / B)`` per run of ``cut`` elements
    when ``cut`` is given, a run the blocks end with), the slots per work item (mode B) or the
    rows per work item (mode ``row_blocks``: ``n_outer`` kept dims, then the reduced ones, all
    run as inner dims, a block of ``nb`` whole rows at a time).
    ``fpe`` (``ninstr + 1`` bytes, zeroed) receives the floating-point exceptions raised, as
    NumPy's NPY_FPE_* bits, per instruction and (last) by the reduction's own arithmetic.
    Returns those bits ORed together (0 when none was raised, or ``fpe`` is None).
    ``writeback`` (elementwise mode, instead of ``out``): ``(target, chunk_rows, back, fwd,
    side)``, the values written into ``target`` (an aligned view of ``shape``, any strides)
    a chunk of rows of dim 0 at a time, the first ``back`` and last ``fwd`` rows of each
    chunk through ``side`` (``(back + fwd)`` rows per chunk, or None when both are 0): see
    lz_do_chunk in _cpu_vm.h.
    ``progress`` (elementwise mode into ``out``, one thread): two int64, zeroed; the run
    stores in ``[0]`` how many elements of ``out`` (C order) are written as it goes (read it
    with :func:`progress_of`; the whole count means ``fpe`` is complete too) and stops early
    once ``[1]`` is set nonzero.
    ``fields`` (a 2-d ``shape`` whose blocks lie in rows: elementwise mode by rows, or mode A cut
    at them): the stencil fields (lz_field in _cpu_vm.h; cpu_stencil.py), each ``(F, scalars,
    fpe, base, s0, s1, tops)``: F's VMProgram, its scalar bytes and flags' bytearray (or None),
    the base view (an array whose first element F reads, at byte strides ``s0``, ``s1`` over
    the rows and columns), and ``(input, di, dj)`` per shifted read.
    ``out_ostride`` (elementwise mode into ``out``, nonzero): ``out`` is not C-contiguous but
    its inner dims (after the first ``n_outer``, in ``order``) are, and its outputs for outer
    index ``o`` start ``o * out_ostride`` bytes from its first element (a 2-d view's row
    stride: ``p[1:-1, 1:-1]``).
    ``out_read``: an input may read ``out``'s memory (``x += 1`` computed into ``x``); False
    lets the VM test the floating-point status once per block and run a block that raised a
    flag again to tell which instruction did (lz_exec_block), which a run reading what it
    has written cannot do.
    ``mask`` (elementwise mode into a C-contiguous ``out``, ``n_outer`` 0, every input read
    with one stride over the space: a C-contiguous array of ``shape`` or a uniform one): a
    C-contiguous bool array of ``shape``; only its True lanes are computed (each input taken
    at them) and written into ``out``, the others left as they are (a masked update,
    ``x[m] = f(x[m], ...)``: lz_exec_masked in _cpu_vm.h).
    """
    cdef lz_run R
    cdef int nd = len(shape), nin = len(inputs), k, d, e, off, nO, nI, ok
    cdef cnp.ndarray a
    cdef cnp.npy_intp st, t, prod
    cdef cnp.npy_intp full[64]
    cdef cnp.npy_intp fshape[64]
    cdef int keep_dims[64]
    cdef int andim
    cdef cnp.npy_intp cshape[64]
    cdef cnp.npy_intp cstrides[64]
    cdef cnp.npy_intp *ashape
    cdef cnp.npy_intp *astrides
    cdef cnp.npy_intp *strides = <cnp.npy_intp *>malloc(sizeof(cnp.npy_intp) * (nin * nd + 1))
    cdef lz_field *fl
    cdef lz_run *frs = NULL
    cdef VMProgram fprog
    cdef int nf = 0 if fields is None else len(fields)
    memset(&R, 0, sizeof(lz_run))
    R.base = <char **>malloc(sizeof(char *) * (nin + 1))
    R.Ostr = <cnp.npy_intp *>malloc(sizeof(cnp.npy_intp) * (nin * nd + 1))
    R.Istr = <cnp.npy_intp *>malloc(sizeof(cnp.npy_intp) * (nin * nd + 1))
    R.dstride = <cnp.npy_intp *>malloc(sizeof(cnp.npy_intp) * (nin + 1))
    try:
        if not (strides and R.base and R.Ostr and R.Istr and R.dstride):
            raise MemoryError()
        for d in range(nd):
            fshape[d] = shape[order[d]]
        # broadcast strides of every input, in `order`
        for k in range(nin):
            if prog.P.input_isz[k] == 0:
                # a random draw's counters (lazyarr/_counters.py): no memory; the "address"
                # offset*8 plus the byte strides of uint64 elements is 8x the counter
                # (lz_count_run)
                c = inputs[k]
                R.base[k] = <char *><size_t>(<cnp.npy_intp>c.offset * 8)
                andim = len(c.shape)
                for e in range(andim):
                    cshape[e], cstrides[e] = c.shape[e], c.strides[e]
                ashape, astrides = cshape, cstrides
            else:
                a = <cnp.ndarray>inputs[k]
                R.base[k] = <char *>cnp.PyArray_DATA(a)
                andim, ashape, astrides = a.ndim, cnp.PyArray_DIMS(a), cnp.PyArray_STRIDES(a)
            off = nd - andim
            for d in range(nd):
                e = order[d] - off
                if e < 0 or ashape[e] == 1 or fshape[d] == 1:
                    strides[k * nd + d] = 0
                else:
                    strides[k * nd + d] = astrides[e]
        if mode == MODES["row_blocks"]:
            # whole rows: the kept dims (the first n_outer) become inner dims too, so that a
            # block runs over several rows (lz_do_rows)
            R.nrows, R.row_len = 1, 1
            for d in range(nd):
                if d < n_outer:
                    R.nrows *= fshape[d]
                else:
                    R.row_len *= fshape[d]
            R.rows_per_item = nb
            n_outer = 0
        # outer dims (drop size 1), then inner dims (drop size 1, coalesce)
        R.Osz = 1
        nO = 0
        for d in range(n_outer):
            R.Osz *= fshape[d]
            if fshape[d] != 1:
                keep_dims[nO] = d
                nO += 1
        for e in range(nO):
            R.Oshape[e] = fshape[keep_dims[e]]
            for k in range(nin):
                R.Ostr[k * nO + e] = strides[k * nd + keep_dims[e]]
        R.nO = nO
        R.Isz = 1
        nI = 0
        for d in range(n_outer, nd):
            R.Isz *= fshape[d]
            if fshape[d] == 1:
                continue
            if nI > 0:
                ok = 1
                for k in range(nin):
                    if strides[k * nd + keep_dims[nI - 1]] != strides[k * nd + d] * fshape[d]:
                        ok = 0
                        break
                if ok:  # merge dim d into the previous kept one
                    full[nI - 1] *= fshape[d]
                    for k in range(nin):
                        strides[k * nd + keep_dims[nI - 1]] = strides[k * nd + d]
                    continue
            keep_dims[nI] = d
            full[nI] = fshape[d]
            nI += 1
        R.nI = nI
        for e in range(nI):
            R.Ishape[e] = full[e]
            for k in range(nin):
                R.Istr[k * nI + e] = strides[k * nd + keep_dims[e]]
        # inputs readable with one stride over the inner index are read in place
        for k in range(nin):
            if nI == 0:
                R.dstride[k] = 0
                continue
            t = R.Istr[k * nI + nI - 1]
            prod = 1
            ok = 1
            for e in range(nI - 1, -1, -1):
                if R.Istr[k * nI + e] != t * prod:
                    ok = 0
                    break
                prod *= R.Ishape[e]
            R.dstride[k] = t if ok else LZ_GATHER
        R.mode = mode
        R.scalars = scalars
        R.out = <char *>_ptr(out)
        R.out_read = out_read and out is not None
        R.out_ostride = out_ostride if out is not None and mode == MODES["elementwise"] else 0
        if writeback is not None:
            _set_writeback(&R, writeback)
        if partials is not None:
            _set_partials(&R, partials)
        R.nb = nb
        R.cut = cut if mode == MODE_RED_A else 0
        R.nchunk, R.chunk_rows = nchunk, chunk_rows
        R.check_signals = PyThread_get_thread_ident() == _main_thread
        if fpe is not None:
            if len(fpe) != prog.P.ninstr + 1:
                raise ValueError("fpe: ninstr + 1 bytes")
            R.fpe = <unsigned char *>PyByteArray_AS_STRING(fpe)
        if progress is not None:
            if mode != MODES["elementwise"] or writeback is not None or out is None \
                    or nthreads != 1 or progress.dtype.num != cnp.NPY_INT64 or progress.shape[0] != 2 \
                    or not progress.flags.c_contiguous or not progress.flags.writeable:
                raise ValueError("progress: two int64, for one thread's elementwise run into out")
            R.progress = <cnp.npy_int64 *>cnp.PyArray_DATA(progress)
        if mask is not None:
            if mode != MODES["elementwise"] or out is None or writeback is not None \
                    or progress is not None or fields is not None or R.out_ostride or R.nO \
                    or prog.P.ninstr == 0 or not (<cnp.ndarray>out).flags.c_contiguous \
                    or mask.dtype.num != cnp.NPY_BOOL or not mask.flags.c_contiguous \
                    or mask.size != R.Osz * R.Isz or (<cnp.ndarray>out).size != mask.size:
                raise ValueError("mask: a C-contiguous bool array of the space, for an "
                                 "elementwise run with one inner index into a C-contiguous out")
            for k in range(nin):
                if prog.P.input_val[k] >= 0 and (prog.P.input_isz[k] == 0
                                                 or R.dstride[k] == LZ_GATHER):
                    raise ValueError("mask: every input read with one stride over the space")
            R.mask = <const cnp.npy_bool *>cnp.PyArray_DATA(mask)
            R.out_read = 0
        if R.Osz == 0 or R.Isz == 0 or nb == 0:
            return 0
        if nf:
            if nd != 2:
                raise ValueError("fields: a 2-d space")
            R.fields = <lz_field *>calloc(nf, sizeof(lz_field))
            frs = <lz_run *>calloc(nf, sizeof(lz_run))
            if R.fields == NULL or frs == NULL:
                raise MemoryError()
            R.nfields, R.rows, R.cols = nf, shape[0], shape[1]
            for k in range(nf):
                fprog, fscalars, ffpe, fbase, fs0, fs1, tops = fields[k]
                if not 2 <= len(tops) <= LZ_FIELD_TOPS or fprog.P.ninputs != 1:
                    raise ValueError("fields: a one-input program read at 2 to 16 shifts")
                if ffpe is not None and len(ffpe) != fprog.P.ninstr + 1:
                    raise ValueError("fields: fpe of ninstr + 1 bytes")
                fl = &R.fields[k]
                fl.F = &fprog.P
                fl.Rf = &frs[k]
                frs[k].scalars = <char *>fscalars
                frs[k].fpe = NULL if ffpe is None else <unsigned char *>PyByteArray_AS_STRING(ffpe)
                fl.base = <char *>cnp.PyArray_DATA(<cnp.ndarray>fbase)
                fl.s0, fl.s1 = fs0, fs1
                fl.osize = fprog.P.instr[fprog.P.ninstr - 1].osize
                fl.ntops = len(tops)
                for t in range(fl.ntops):
                    fl.top_input[t], fl.di[t], fl.dj[t] = tops[t]
                    if not 0 <= fl.top_input[t] < nin or fl.di[t] < 0:
                        raise ValueError("fields: a top is an input at a shift di >= 0")
                fl.di0 = min([top[1] for top in tops])
                fl.di1 = max([top[1] for top in tops])
                fl.dj0 = min([top[2] for top in tops])
                fl.dj1 = max([top[2] for top in tops])
        with nogil:
            ok = lz_execute(&prog.P, &R, nthreads)
        _raise_pending()
        if ok == -3:     # abandoned without an exception set: cannot happen, but never silent
            raise KeyboardInterrupt()
        if ok == -2:
            raise MemoryError("lazyarr cpu-fused: out of memory for block registers")
        if ok != 0:
            raise FloatingPointError("lazyarr cpu-fused: a NumPy inner loop reported an error")
        flags = 0
        if R.fpe != NULL:
            for k in range(prog.P.ninstr + 1):
                flags |= R.fpe[k]
        return flags
    finally:
        free(R.fields)
        free(frs)
        free(strides)
        free(R.base)
        free(R.Ostr)
        free(R.Istr)
        free(R.dstride)


def data_address(cnp.ndarray v):
    """The address of ``v``'s first element (``v.ctypes.data`` without the ctypes object:
    ~50 ns instead of ~1.3 µs; cpu_fused._write_back_plan asks it per input per write)."""
    return <size_t>cnp.PyArray_DATA(v)


def prefault(cnp.ndarray out):
    """Make a new result's memory resident before a parallel run writes it, if it is not
    (lz_prefault in _cpu_vm.h: parallel first touches of fresh huge pages are ~3x slower than
    one thread's). True if it populated the memory."""
    return bool(lz_prefault(<char *>cnp.PyArray_DATA(out), cnp.PyArray_NBYTES(out)))


# ----------------------------------------------------------------------------- result pool
cdef extern from "_cpu_pool.h" nogil:
    ctypedef struct PyDataMem_Handler:
        pass
    PyDataMem_Handler lz_rpool_handler
    size_t lz_rpool_release()
    size_t lz_rpool_set_limit(size_t limit)
    size_t lz_rpool_min, lz_rpool_bytes, lz_rpool_limit
    int lz_rpool_count, lz_rpool_hugepages, lz_rpool_reused
    unsigned long long lz_rpool_hits, lz_rpool_misses

cdef extern from "numpy/arrayobject.h":
    object PyDataMem_SetHandler(object handler)

# (the capsule name NumPy requires of a handler; arrays allocated through it hold it)
cdef object _RESULT_POOL = PyCapsule_New(&lz_rpool_handler, "mem_handler", NULL)


def result_pool_call(object fn, tuple args, dict kwargs):
    """``fn(*args, **kwargs)`` with the result pool as NumPy's memory handler: every array it
    allocates (its result, its temporaries) takes a kept block of its size if there is one,
    and goes back to the pool when it dies (a NumPy call made for the user: a random draw, a
    fallback function, ``la.empty``). Without a limit, a plain call."""
    if lz_rpool_limit == 0:
        return fn(*args, **kwargs)
    old = PyDataMem_SetHandler(_RESULT_POOL)
    try:
        return fn(*args, **kwargs)
    finally:
        PyDataMem_SetHandler(old)


def result_pool_empty(tuple shape, object dtype, bint hugepages):
    """``numpy.empty(shape, dtype)`` through the result pool (:func:`result_pool_call`), and
    whether it took a kept block (resident memory: no first touch to pay). ``hugepages``:
    advise huge pages for a new block, as NumPy does."""
    global lz_rpool_hugepages, lz_rpool_reused
    lz_rpool_hugepages = hugepages
    lz_rpool_reused = 0
    out = result_pool_call(_np.empty, (shape, dtype), {})
    return out, bool(lz_rpool_reused)


cdef object _result_array(int ndim, cnp.npy_intp *dims, int type_num):
    """A new C-ordered result array, from the result pool where it is that large (a bound
    call's result: la.jit's replays; huge pages advised as the last result_pool_empty's)."""
    cdef cnp.npy_intp nbytes = cnp.PyArray_DescrFromType(type_num).itemsize
    cdef int d
    for d in range(ndim):
        nbytes *= dims[d]
    if lz_rpool_limit == 0 or <size_t>nbytes < lz_rpool_min:
        return cnp.PyArray_EMPTY(ndim, dims, type_num, 0)
    old = PyDataMem_SetHandler(_RESULT_POOL)
    try:
        return cnp.PyArray_EMPTY(ndim, dims, type_num, 0)
    finally:
        PyDataMem_SetHandler(old)


def result_pool_limit(size_t limit):
    """Keep at most ``limit`` bytes of freed results (0: none; kept blocks over it go); the
    old limit."""
    return lz_rpool_set_limit(limit)


def result_pool_release():
    """Return every kept block to the system; the bytes returned."""
    return lz_rpool_release()


def result_pool_info():
    """The pool's state: blocks and bytes kept, its limit, the smallest block it keeps, and
    the allocations of at least that size that took a kept block (hits) or not (misses)."""
    return {"blocks": lz_rpool_count, "bytes": lz_rpool_bytes, "limit": lz_rpool_limit,
            "min_bytes": lz_rpool_min, "hits": lz_rpool_hits, "misses": lz_rpool_misses}


def scalar_bytes(object scalars):
    """The kernel's scalar operands as the VM reads them: SCALAR_BYTES per scalar, each NumPy
    scalar's own bytes, zero-padded (``b"".join(s.tobytes().ljust(SCALAR_BYTES, b"\\0"))``,
    ~1.4 µs for four scalars in Python: ~0.2 here, once per launch)."""
    cdef Py_ssize_t n = len(scalars), i
    cdef bytes out = PyBytes_FromStringAndSize(NULL, n * LZ_SCALAR_BYTES)
    cdef char *p = PyBytes_AS_STRING(out)      # (new, not yet shared: filled in place)
    memset(p, 0, n * LZ_SCALAR_BYTES)
    for i, s in enumerate(scalars):
        if not isinstance(s, cnp.generic) or (<cnp.dtype>s.dtype).itemsize > LZ_SCALAR_BYTES:
            raise TypeError(f"a kernel scalar must be a NumPy scalar of at most "
                            f"{LZ_SCALAR_BYTES} bytes, not {type(s).__name__}")
        cnp.PyArray_ScalarAsCtype(s, p + i * LZ_SCALAR_BYTES)
    return out


def row_extent(cnp.ndarray v):
    """The first and last byte address row 0 of ``v`` touches (cpu_fused._write_back_plan)."""
    cdef Py_ssize_t lo = <Py_ssize_t>cnp.PyArray_DATA(v)
    cdef Py_ssize_t hi = lo
    cdef Py_ssize_t n, st
    cdef int k
    for k in range(1, cnp.PyArray_NDIM(v)):
        n, st = cnp.PyArray_DIM(v, k), cnp.PyArray_STRIDE(v, k)
        if st < 0:
            lo += st * (n - 1)
        else:
            hi += st * (n - 1)
    return lo, hi + cnp.PyArray_ITEMSIZE(v) - 1


cdef list _kernel_inputs(list buffers, tuple dtypes, object prepare):
    """A bound runner's kernel inputs: with ``dtypes`` None, the buffers as they are; else each
    buffer as it is where it is an aligned NumPy array of its input's dtype (checked in C: a
    replay's buffers nearly always are), and ``prepare(buffer, dtype)`` (``cpu_fused._prepare``:
    a cast, an aligned copy, a random draw's counters as they are) for any other."""
    cdef Py_ssize_t k
    cdef Py_ssize_t n
    cdef list inputs
    cdef object b
    if dtypes is None:
        return buffers
    n = min(len(buffers), len(dtypes))             # (as ``zip``)
    inputs = [None] * n
    for k in range(n):
        b = buffers[k]
        if type(b) is cnp.ndarray and cnp.PyArray_ISALIGNED(<cnp.ndarray>b) and \
                cnp.PyArray_EquivTypes((<cnp.ndarray>b).dtype, <cnp.dtype>dtypes[k]):
            inputs[k] = b
        else:
            inputs[k] = prepare(b, dtypes[k])
    return inputs


cdef inline bytearray _no_flags(Py_ssize_t n):
    """``bytearray(n)``: the zeroed floating-point flags :func:`execute` fills, one byte per
    instruction and one for the reduction."""
    cdef bytearray fpe = PyByteArray_FromStringAndSize(NULL, n)
    memset(PyByteArray_AS_STRING(fpe), 0, n)
    return fpe


# Spare scratch arrays. A reduction's float64 partials are scratch: only the VM reads them,
# and they never reach the result; its float64 results are too once the finishing step has
# made the result from them (a float32 sum's, rounded into a new array). Big ones, allocated
# anew per call, came from fresh pages (the allocator hands memory of a few MiB back to the
# system when it is freed), and the page faults and clearing were ~15 % of a middle-axis sum
# of (512, 32, 1024) float32 (docs/notes/cpu.rst, "Middle axes"). So a call gives them back
# here (results only where nothing else holds them) and the next call of the same size takes
# them, up to SPARE_MAX_BYTES in all; the GIL orders the two (a concurrent call of the same
# size finds none and allocates its own).
SPARE_MIN_BYTES = 1 << 18
SPARE_MAX_BYTES = 1 << 25
cdef dict _spares = {}
cdef Py_ssize_t _spare_bytes = 0


cdef cnp.ndarray _take_scratch(int num, cnp.npy_intp n):
    global _spare_bytes
    cdef list free = _spares.get((num, n))
    cdef cnp.ndarray a
    if free:
        a = free.pop()
        _spare_bytes -= a.nbytes
        return a
    return cnp.PyArray_EMPTY(1, &n, num, 0)


cdef void _give_scratch(cnp.ndarray a):
    global _spare_bytes
    if a.nbytes < SPARE_MIN_BYTES or _spare_bytes + a.nbytes > SPARE_MAX_BYTES:
        return
    _spares.setdefault((a.dtype.num, a.shape[0]), []).append(a)
    _spare_bytes += a.nbytes


def spare_bytes():
    """The bytes of spare partial arrays held (tests)."""
    return _spare_bytes


cdef class BoundReduction:
    """The runner of one reduction launch, called again on new buffers like its first ones
    (``cpu_fused._bound_reduction``: a repeated small ``la.sum``): the partial arrays, the
    :func:`execute` call and, for a full float sum, product or mean, the result's rounding,
    in C. A call is a few µs, of which the Python frames of this step were about one.

    ``names``: the partial and result arrays (``("pd", "rd", dtype)``, ...); ``dtypes``: None
    (the buffers go to the kernel as they are) or the kernel's input dtypes, with ``prepare``
    (``cpu_fused._prepare``) for a buffer that is not already an aligned array of its dtype
    (:func:`_kernel_inputs`); ``report``: called with the floating-point flags' bytes when an
    exception was raised; ``finish``: the arrays to the result (``_finalize``), for everything
    the float fast path below does not take."""
    cdef VMProgram vm
    cdef bytes scalars
    cdef tuple shape, order, names, out_shape
    cdef int n_outer, mode, nthreads
    cdef cnp.npy_intp nb, nchunk, chunk_rows, nparts, m, cut
    cdef Py_ssize_t nfpe
    cdef tuple dtypes
    cdef object prepare, report, finish, op
    cdef bint scalar_float, mean, product, scratch
    cdef double top, rsz
    cdef int result_type       # NPY_FLOAT or NPY_DOUBLE for the fast path, else -1

    def __init__(self, VMProgram vm, bytes scalars, tuple shape, tuple order, int n_outer,
                 int mode, int nthreads, cnp.npy_intp nb, cnp.npy_intp nchunk,
                 cnp.npy_intp chunk_rows, cnp.npy_intp nparts, cnp.npy_intp m, tuple names,
                 Py_ssize_t nfpe, tuple dtypes, prepare, report, finish, bint scalar_float, bint mean,
                 double top, double rsz, result, tuple out_shape, str op, cnp.npy_intp cut=0):
        self.vm, self.scalars, self.shape, self.order = vm, scalars, shape, order
        self.n_outer, self.mode, self.nthreads = n_outer, mode, nthreads
        self.nb, self.nchunk, self.chunk_rows = nb, nchunk, chunk_rows
        self.nparts, self.m, self.cut = nparts, m, cut
        # (the dtype's name only in an error: NumPy's ``dtype.name`` is Python, ~5 µs a
        # part, and a loop whose slices change every step binds a runner per step)
        self.names = tuple([(p, r, cnp.dtype(dt).num, cnp.dtype(dt)) for p, r, dt in names])
        self.nfpe, self.prepare, self.report, self.finish = nfpe, prepare, report, finish
        self.dtypes = dtypes
        self.scalar_float, self.mean, self.top, self.rsz = scalar_float, mean, top, rsz
        num = cnp.dtype(result).num
        self.result_type = num if num in (cnp.NPY_FLOAT, cnp.NPY_DOUBLE) else -1
        self.out_shape, self.op = out_shape, op
        self.product = op == "prod"
        # (every partial and result array has 8-byte elements: float64, int64, uint64)
        self.scratch = 8 * max(nparts, m) >= SPARE_MIN_BYTES

    def __call__(self, list buffers, tuple fields=None):
        """The reduction of ``buffers``; ``fields``: the stencil fields of this call
        (:func:`execute`)."""
        cdef list inputs = _kernel_inputs(buffers, self.dtypes, self.prepare)
        cdef dict arrays = {}
        cdef object fpe
        cdef cnp.ndarray one, a
        cdef double v
        for pname, rname, num, dtype in self.names:
            try:
                arrays[pname] = (_take_scratch(num, self.nparts) if self.scratch
                                 else cnp.PyArray_EMPTY(1, &self.nparts, num, 0))
            except MemoryError as exc:
                raise MemoryError(f"{exc}: the partial results of the {self.op} over "
                                  f"{self.shape} ({self.nparts:,} x {dtype.name})") from exc
            arrays[rname] = (_take_scratch(num, self.m) if self.scratch
                             else cnp.PyArray_EMPTY(1, &self.m, num, 0))
        fpe = _no_flags(self.nfpe)
        try:
            flagged = execute(self.vm, inputs, self.scalars, self.shape, self.order,
                              self.n_outer, self.mode,
                              self.nthreads if self.nthreads > 0 else _pool_threads, None,
                              arrays, self.nb, self.nchunk, self.chunk_rows, fpe, None, None,
                              True, self.cut, fields)   # (positional: a direct C call)
        finally:
            if self.scratch:        # (small arrays skip the pool's steps: ~0.2 µs a call)
                for pname, rname, num, dtype in self.names:
                    _give_scratch(arrays.pop(pname))
        if flagged:
            self.report(fpe)
        if self.scalar_float and self.result_type >= 0:
            # _finalize's Python-float branch: NumPy's sums start from +0.0; a mean divides
            # once; the float64 value rounds once to the result (an overflow: _finalize warns)
            v = (<double *>cnp.PyArray_DATA(<cnp.ndarray>arrays["rd"]))[0]
            if not self.product:        # (a product keeps its zero's sign, as NumPy's)
                v = v + 0.0
            if self.mean:
                v = v / self.rsz
            if not fabs(v) > self.top:
                one = cnp.PyArray_EMPTY(0, NULL, self.result_type, 0)
                if self.result_type == cnp.NPY_FLOAT:
                    (<float *>cnp.PyArray_DATA(one))[0] = <float>v
                else:
                    (<double *>cnp.PyArray_DATA(one))[0] = v
                return one.reshape(self.out_shape) if self.out_shape else one
        if not self.scratch:
            return self.finish(arrays)
        result = self.finish(arrays)
        for pname, rname, num, dtype in self.names:
            a = arrays.pop(rname)
            if Py_REFCNT(a) == 1:     # only ``a`` holds it: not the result, no view of it
                _give_scratch(a)
        return result


cdef class BoundElementwise:
    """The runner of one elementwise launch, called again on new buffers like its first ones
    (``cpu_fused``'s ``bind``: a jitted small call's replay): a new C-order result of the
    launch's dtype and shape, the :func:`execute` call into it, its floating-point errors
    reported, in C. ``dtypes``, ``prepare``, ``report``: as :class:`BoundReduction`'s."""
    cdef VMProgram vm
    cdef bytes scalars
    cdef tuple shape, order
    cdef int outer, nthreads, result_type, ndim, mode
    cdef cnp.npy_intp nb, size
    cdef cnp.npy_intp dims[64]
    cdef Py_ssize_t nfpe
    cdef tuple dtypes
    cdef object prepare, report

    def __init__(self, VMProgram vm, bytes scalars, tuple shape, int outer, int nthreads,
                 result, tuple out_shape, cnp.npy_intp block, Py_ssize_t nfpe, tuple dtypes,
                 prepare, report):
        cdef int d
        cdef cnp.npy_intp run
        self.vm, self.scalars, self.shape = vm, scalars, shape
        self.outer, self.nthreads = outer, nthreads
        self.order = tuple(range(len(shape)))
        self.result_type = cnp.dtype(result).num
        self.ndim = len(out_shape)
        if self.ndim > 64:
            raise ValueError("at most 64 dimensions")
        self.size = 1
        for d in range(self.ndim):
            self.dims[d] = out_shape[d]
            self.size *= out_shape[d]
        # the blocks of a run (as cpu_fused._execute_into; this module is compiled with
        # wraparound=False and cdivision=True: no shape[-1], and a ceiling of positives)
        run = shape[len(shape) - 1] if outer else self.size
        self.nb = (run + block - 1) // block if block > 0 else 0
        self.nfpe, self.dtypes, self.prepare, self.report = nfpe, dtypes, prepare, report
        self.mode = MODES["elementwise"]

    def __call__(self, list buffers):
        cdef list inputs = _kernel_inputs(buffers, self.dtypes, self.prepare)
        cdef object out = _result_array(self.ndim, self.dims, self.result_type)
        cdef object fpe
        if not self.size:
            return out
        fpe = _no_flags(self.nfpe)
        if execute(self.vm, inputs, self.scalars, self.shape, self.order, self.outer,
                   self.mode, self.nthreads if self.nthreads > 0 else _pool_threads, out, None,
                   self.nb, 1, 0, fpe, out_read=False):
            self.report(fpe)
        return out
