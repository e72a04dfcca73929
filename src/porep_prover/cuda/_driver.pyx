# SPDX-License-Identifier: Apache-2.0
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The CUDA driver API from Cython, without the GIL: devices and their primary
contexts, modules and kernels, streams, events, device buffers and pinned host
buffers. Device plumbing only: nothing here knows what a field element is.

Every driver call goes through `check`, which turns a failing CUresult into a
CudaError (DeviceMemoryError for allocation failures) naming the call. Objects
own their handles and release them in close() (idempotent) or when collected;
a context is made current on the calling thread before each operation, so any
thread may use any object."""
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from cuda.bindings cimport cydriver as drv

from porep_prover.errors import CudaError, DeviceMemoryError

_OOM = (2,)  # CUDA_ERROR_OUT_OF_MEMORY


cdef int check(drv.CUresult rc, str what) except -1:
    """Raise a named CudaError unless rc is CUDA_SUCCESS."""
    cdef const char *name = NULL
    cdef const char *text = NULL
    if rc == drv.CUDA_SUCCESS:
        return 0
    drv.cuGetErrorName(rc, &name)
    drv.cuGetErrorString(rc, &text)
    n = name.decode() if name != NULL else f"CUresult {<int> rc}"
    t = text.decode() if text != NULL else ""
    cls = DeviceMemoryError if <int> rc in _OOM else CudaError
    raise cls(f"{what}: {n} ({t})", code=<int> rc, name=n)


_initialised = False


def init():
    """cuInit once per process; CudaError when there is no usable driver."""
    global _initialised
    cdef drv.CUresult rc
    if not _initialised:
        try:
            with nogil:
                rc = drv.cuInit(0)
        except RuntimeError as exc:  # cuda.bindings could not load libcuda
            raise CudaError(f"no CUDA driver: {exc}", code=-1, name="NO_DRIVER") from None
        check(rc, "cuInit")
        _initialised = True


def device_count():
    cdef int n = 0
    init()
    check(drv.cuDeviceGetCount(&n), "cuDeviceGetCount")
    return n


def device_info(int ordinal):
    """(name, uuid hex, (major, minor), total bytes, multiprocessors) of a device."""
    cdef drv.CUdevice dev
    cdef char name[256]
    cdef drv.CUuuid uuid
    cdef size_t total = 0
    cdef int major = 0, minor = 0, sms = 0
    init()
    check(drv.cuDeviceGet(&dev, ordinal), "cuDeviceGet")
    check(drv.cuDeviceGetName(name, 256, dev), "cuDeviceGetName")
    check(drv.cuDeviceGetUuid(&uuid, dev), "cuDeviceGetUuid")
    check(drv.cuDeviceTotalMem(&total, dev), "cuDeviceTotalMem")
    check(drv.cuDeviceGetAttribute(&major, drv.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "attribute")
    check(drv.cuDeviceGetAttribute(&minor, drv.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "attribute")
    check(drv.cuDeviceGetAttribute(&sms, drv.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "attribute")
    uid = bytes((<unsigned char *> uuid.bytes)[i] for i in range(16)).hex()
    return name.decode(), uid, (major, minor), total, sms


cdef class Context:
    """The primary context of one device, retained for this object's lifetime."""
    cdef drv.CUcontext ctx
    cdef drv.CUdevice dev
    cdef drv.CUmemoryPool pool
    cdef public int ordinal
    # bytes of the DeviceBuffers alive in this context, their peak, and the most they may reach (0: no limit):
    # the device-memory budget, which the card's own free memory cannot say on a card shared or larger
    cdef readonly size_t allocated
    cdef readonly size_t peak
    cdef public size_t limit

    def __cinit__(self, int ordinal):
        init()
        self.ordinal = ordinal
        self.allocated = self.peak = self.limit = 0
        check(drv.cuDeviceGet(&self.dev, ordinal), "cuDeviceGet")
        check(drv.cuDevicePrimaryCtxRetain(&self.ctx, self.dev), "cuDevicePrimaryCtxRetain")

    cdef int use(self) except -1 nogil:
        cdef drv.CUresult rc = drv.cuCtxSetCurrent(self.ctx)
        if rc != drv.CUDA_SUCCESS:
            with gil:
                check(rc, "cuCtxSetCurrent")
        return 0

    def make_current(self):
        self.use()

    def stream_priorities(self):
        """(least, greatest) stream priority: a lower number is served first."""
        cdef int least = 0, greatest = 0
        self.use()
        check(drv.cuCtxGetStreamPriorityRange(&least, &greatest), "cuCtxGetStreamPriorityRange")
        return least, greatest

    def reset_peak(self):
        """Start the peak of allocated bytes over from what is allocated now."""
        self.peak = self.allocated

    def mem_info(self):
        """(free, total) bytes on the device."""
        cdef size_t free_b = 0, total_b = 0
        self.use()
        check(drv.cuMemGetInfo(&free_b, &total_b), "cuMemGetInfo")
        return free_b, total_b

    def synchronize(self):
        self.use()
        with nogil:
            rc = drv.cuCtxSynchronize()
        check(rc, "cuCtxSynchronize")

    def keep_pool(self):
        """Make the device's default memory pool (stream-ordered allocations,
        DeviceBuffer with a stream) keep what is freed to it for the next
        allocation instead of returning it at each synchronisation; False
        where the device has no memory pools."""
        cdef int supported = 0
        cdef drv.cuuint64_t keep = <drv.cuuint64_t> -1
        self.use()
        check(drv.cuDeviceGetAttribute(&supported, drv.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, self.dev),
              "attribute")
        if not supported:
            return False
        check(drv.cuDeviceGetDefaultMemPool(&self.pool, self.dev), "cuDeviceGetDefaultMemPool")
        check(drv.cuMemPoolSetAttribute(self.pool, drv.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep),
              "cuMemPoolSetAttribute")
        return True

    def trim_pool(self):
        """Return the pool's unused memory to the device (for allocations outside it)."""
        if self.pool != NULL:
            self.use()
            check(drv.cuMemPoolTrimTo(self.pool, 0), "cuMemPoolTrimTo")

    def close(self):
        if self.ctx != NULL:
            drv.cuDevicePrimaryCtxRelease(self.dev)
            self.ctx = NULL

    def __dealloc__(self):
        if self.ctx != NULL:
            drv.cuDevicePrimaryCtxRelease(self.dev)


cdef class Module:
    """A loaded cubin."""
    cdef drv.CUmodule mod
    cdef Context ctx

    def __cinit__(self, Context ctx, const unsigned char[::1] image):
        self.ctx = ctx
        ctx.use()
        check(drv.cuModuleLoadData(&self.mod, <const void *> &image[0]), "cuModuleLoadData")

    def kernel(self, str name):
        cdef Kernel k = Kernel.__new__(Kernel)
        k.ctx = self.ctx
        k.module = self
        k.name = name
        self.ctx.use()
        check(drv.cuModuleGetFunction(&k.fn, self.mod, name.encode()), f"cuModuleGetFunction({name})")
        return k

    def close(self):
        if self.mod != NULL:
            self.ctx.use()
            drv.cuModuleUnload(self.mod)
            self.mod = NULL

    def __dealloc__(self):
        if self.mod != NULL and self.ctx is not None and self.ctx.ctx != NULL:
            drv.cuCtxSetCurrent(self.ctx.ctx)
            drv.cuModuleUnload(self.mod)


cdef class Kernel:
    """A __global__ function of a Module (keeps the module alive)."""
    cdef drv.CUfunction fn
    cdef Context ctx
    cdef object module
    cdef public str name

    def set_max_dynamic_shared(self, int nbytes):
        self.ctx.use()
        check(drv.cuFuncSetAttribute(self.fn, drv.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes),
              f"cuFuncSetAttribute({self.name})")

    def attribute(self, str what):
        cdef int v = 0
        cdef drv.CUfunction_attribute a
        if what == "registers":
            a = drv.CU_FUNC_ATTRIBUTE_NUM_REGS
        elif what == "max_threads":
            a = drv.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
        elif what == "local_bytes":
            a = drv.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
        else:
            raise ValueError(what)
        self.ctx.use()
        check(drv.cuFuncGetAttribute(&v, a, self.fn), "cuFuncGetAttribute")
        return v

    def launch(self, grid, block, args, Stream stream=None, unsigned int shared=0):
        """Launch with each argument passed as a 64-bit slot (DeviceBuffer ->
        its address, int -> its value; 32-bit parameters read the low half)."""
        cdef int n = len(args), i
        cdef uint64_t *slots = <uint64_t *> malloc(8 * (n + 1))
        cdef void **params = <void **> malloc(sizeof(void *) * (n + 1))
        cdef unsigned int gx, gy, gz, bx, by, bz
        cdef drv.CUstream s = stream.stream if stream is not None else NULL
        cdef drv.CUresult rc
        if slots == NULL or params == NULL:
            free(slots)
            free(params)
            raise MemoryError()
        try:
            for i in range(n):
                a = args[i]
                slots[i] = (<DeviceBuffer> a).ptr if isinstance(a, DeviceBuffer) else <uint64_t> a
                params[i] = &slots[i]
            gx, gy, gz = (tuple(grid) + (1, 1))[:3]
            bx, by, bz = (tuple(block) + (1, 1))[:3]
            self.ctx.use()
            with nogil:
                rc = drv.cuLaunchKernel(self.fn, gx, gy, gz, bx, by, bz, shared, s, params, NULL)
            check(rc, f"launch {self.name}")
        finally:
            free(slots)
            free(params)


cdef class Event:
    cdef drv.CUevent event
    cdef Context ctx

    def __cinit__(self, Context ctx):
        self.ctx = ctx
        ctx.use()
        check(drv.cuEventCreate(&self.event, drv.CU_EVENT_DEFAULT), "cuEventCreate")

    def record(self, Stream stream=None):
        self.ctx.use()
        check(drv.cuEventRecord(self.event, stream.stream if stream is not None else NULL), "cuEventRecord")

    def synchronize(self):
        self.ctx.use()
        with nogil:
            rc = drv.cuEventSynchronize(self.event)
        check(rc, "cuEventSynchronize")

    def elapsed_ms(self, Event start):
        """Milliseconds from start to this event (both recorded and complete)."""
        cdef float ms = 0
        self.ctx.use()
        check(drv.cuEventElapsedTime(&ms, start.event, self.event), "cuEventElapsedTime")
        return ms

    def close(self):
        if self.event != NULL:
            self.ctx.use()
            drv.cuEventDestroy(self.event)
            self.event = NULL

    def __dealloc__(self):
        if self.event != NULL and self.ctx is not None and self.ctx.ctx != NULL:
            drv.cuCtxSetCurrent(self.ctx.ctx)
            drv.cuEventDestroy(self.event)


cdef class Stream:
    cdef drv.CUstream stream
    cdef Context ctx

    def __cinit__(self, Context ctx, int priority=0):
        self.ctx = ctx
        ctx.use()
        check(drv.cuStreamCreateWithPriority(&self.stream, drv.CU_STREAM_NON_BLOCKING, priority),
              "cuStreamCreateWithPriority")

    def wait(self, Event event):
        """Work queued on this stream after the call waits for event (recorded on any stream)."""
        self.ctx.use()
        check(drv.cuStreamWaitEvent(self.stream, event.event, 0), "cuStreamWaitEvent")

    def synchronize(self):
        self.ctx.use()
        with nogil:
            rc = drv.cuStreamSynchronize(self.stream)
        check(rc, "cuStreamSynchronize")

    def close(self):
        if self.stream != NULL:
            self.ctx.use()
            drv.cuStreamDestroy(self.stream)
            self.stream = NULL

    def __dealloc__(self):
        if self.stream != NULL and self.ctx is not None and self.ctx.ctx != NULL:
            drv.cuCtxSetCurrent(self.ctx.ctx)
            drv.cuStreamDestroy(self.stream)


cdef class DeviceBuffer:
    """nbytes of device memory, freed by close() or collection. With a stream:
    taken from the device's memory pool in that stream's order and given
    back in it, without waiting (work queued on the stream before close()
    still sees it; work on other streams must be ordered before close())."""
    cdef readonly uint64_t ptr
    cdef readonly size_t nbytes
    cdef Context ctx
    cdef Stream stream

    def __cinit__(self, Context ctx, size_t nbytes, Stream stream=None):
        cdef drv.CUdeviceptr p = 0
        self.ctx = ctx
        self.nbytes = nbytes
        self.stream = stream
        if ctx.limit and ctx.allocated + nbytes > ctx.limit:
            raise DeviceMemoryError(f"{nbytes} bytes past the device budget ({ctx.allocated} of {ctx.limit} "
                                    f"bytes held)", code=2, name="CUDA_ERROR_OUT_OF_MEMORY")
        ctx.use()
        if stream is None:
            check(drv.cuMemAlloc(&p, nbytes if nbytes else 1), f"cuMemAlloc({nbytes} bytes)")
        else:
            check(drv.cuMemAllocAsync(&p, nbytes if nbytes else 1, stream.stream),
                  f"cuMemAllocAsync({nbytes} bytes)")
        self.ptr = <uint64_t> p
        ctx.allocated += nbytes
        if ctx.allocated > ctx.peak:
            ctx.peak = ctx.allocated

    @property
    def pooled(self):
        return self.stream is not None

    def view(self, size_t offset):
        """The address offset bytes in (for kernel arguments)."""
        if offset > self.nbytes:
            raise ValueError(f"offset {offset} past {self.nbytes} bytes")
        return self.ptr + offset

    def upload(self, const unsigned char[::1] data, size_t offset=0, Stream stream=None):
        """Copy host bytes in at offset (async on a stream, else synchronous)."""
        cdef size_t n = data.shape[0]
        cdef drv.CUresult rc
        if offset + n > self.nbytes:
            raise ValueError(f"{n} bytes at offset {offset} overflow a {self.nbytes}-byte buffer")
        if n == 0:
            return
        self.ctx.use()
        with nogil:
            if stream is None:
                rc = drv.cuMemcpyHtoD(<drv.CUdeviceptr> (self.ptr + offset), &data[0], n)
            else:
                rc = drv.cuMemcpyHtoDAsync(<drv.CUdeviceptr> (self.ptr + offset), &data[0], n, stream.stream)
        check(rc, "cuMemcpyHtoD")

    def download(self, unsigned char[::1] out, size_t offset=0, Stream stream=None):
        cdef size_t n = out.shape[0]
        cdef drv.CUresult rc
        if offset + n > self.nbytes:
            raise ValueError(f"{n} bytes at offset {offset} overflow a {self.nbytes}-byte buffer")
        if n == 0:
            return
        self.ctx.use()
        with nogil:
            if stream is None:
                rc = drv.cuMemcpyDtoH(&out[0], <drv.CUdeviceptr> (self.ptr + offset), n)
            else:
                rc = drv.cuMemcpyDtoHAsync(&out[0], <drv.CUdeviceptr> (self.ptr + offset), n, stream.stream)
        check(rc, "cuMemcpyDtoH")

    def copy_from(self, DeviceBuffer src, size_t nbytes, size_t dst_offset=0, size_t src_offset=0,
                  Stream stream=None):
        cdef drv.CUresult rc
        if dst_offset + nbytes > self.nbytes or src_offset + nbytes > src.nbytes:
            raise ValueError("device copy out of bounds")
        self.ctx.use()
        with nogil:
            if stream is None:
                rc = drv.cuMemcpyDtoD(<drv.CUdeviceptr> (self.ptr + dst_offset),
                                      <drv.CUdeviceptr> (src.ptr + src_offset), nbytes)
            else:
                rc = drv.cuMemcpyDtoDAsync(<drv.CUdeviceptr> (self.ptr + dst_offset),
                                           <drv.CUdeviceptr> (src.ptr + src_offset), nbytes, stream.stream)
        check(rc, "cuMemcpyDtoD")

    def zero(self, Stream stream=None):
        cdef drv.CUresult rc
        self.ctx.use()
        with nogil:
            if stream is None:
                rc = drv.cuMemsetD8(<drv.CUdeviceptr> self.ptr, 0, self.nbytes)
            else:
                rc = drv.cuMemsetD8Async(<drv.CUdeviceptr> self.ptr, 0, self.nbytes, stream.stream)
        check(rc, "cuMemsetD8")

    def close(self):
        if self.ptr:
            self.ctx.use()
            if self.stream is not None and self.stream.stream != NULL:
                drv.cuMemFreeAsync(<drv.CUdeviceptr> self.ptr, self.stream.stream)
            else:
                drv.cuMemFree(<drv.CUdeviceptr> self.ptr)
            self.ptr = 0
            self.ctx.allocated -= self.nbytes

    def __dealloc__(self):
        # not in stream order: the stream may already be gone (cuMemFree waits for the device)
        if self.ptr and self.ctx is not None and self.ctx.ctx != NULL:
            drv.cuCtxSetCurrent(self.ctx.ctx)
            drv.cuMemFree(<drv.CUdeviceptr> self.ptr)
            self.ctx.allocated -= self.nbytes


cdef class PinnedBuffer:
    """Page-locked host memory (fast, truly asynchronous copies), exposed as a
    writable buffer; freed by close() or collection. Portable: every context
    of the process reads it as page-locked (an engine's partitions are laid
    out in one device's arenas and proved on any)."""
    cdef void *data
    cdef readonly size_t nbytes
    cdef Context ctx
    cdef Py_ssize_t shape[1]
    cdef Py_ssize_t strides[1]
    cdef int views

    def __cinit__(self, Context ctx, size_t nbytes):
        cdef drv.CUresult rc
        cdef void *data = NULL
        cdef size_t size = nbytes if nbytes else 1
        self.ctx = ctx
        self.nbytes = nbytes
        ctx.use()
        # page-locking and zeroing a partition's arena (gigabytes) take seconds: the other threads run meanwhile
        with nogil:
            rc = drv.cuMemHostAlloc(&data, size, drv.CU_MEMHOSTALLOC_PORTABLE)
            if rc == drv.CUDA_SUCCESS:
                memset(data, 0, nbytes)
        check(rc, f"cuMemHostAlloc({nbytes} bytes)")
        self.data = data

    def __getbuffer__(self, Py_buffer *buf, int flags):
        self.shape[0] = <Py_ssize_t> self.nbytes
        self.strides[0] = 1
        buf.buf = self.data
        buf.obj = self
        buf.len = <Py_ssize_t> self.nbytes
        buf.readonly = 0
        buf.itemsize = 1
        buf.format = "B"
        buf.ndim = 1
        buf.shape = self.shape
        buf.strides = self.strides
        buf.suboffsets = NULL
        buf.internal = NULL
        self.views += 1

    def __releasebuffer__(self, Py_buffer *buf):
        self.views -= 1

    def close(self):
        cdef void *data = self.data
        if self.views:
            raise BufferError("pinned buffer still has views")
        if data != NULL:
            self.data = NULL
            self.ctx.use()
            with nogil:
                drv.cuMemFreeHost(data)

    @property
    def has_views(self):
        """Whether buffer views of it are alive (close() refuses then; collection frees it once they go)."""
        return self.views > 0

    def __dealloc__(self):
        if self.data != NULL and self.ctx is not None and self.ctx.ctx != NULL:
            drv.cuCtxSetCurrent(self.ctx.ctx)
            drv.cuMemFreeHost(self.data)


cdef class HostRegistration:
    """Host memory someone else owns, page-locked in place (cuMemHostRegister,
    portable to every context) until close() or collection, so that copies
    from it run as DMA, asynchronous on a stream. Read-only where the device
    supports it (a read-only file mapping can be registered then). The
    memory must stay mapped until this is closed: it keeps no reference to
    its owner (the caller closes it before the owner goes)."""
    cdef void *ptr
    cdef readonly size_t nbytes
    cdef Context ctx

    def __cinit__(self, Context ctx, const unsigned char[::1] data):
        cdef drv.CUresult rc
        cdef size_t n = data.shape[0]
        cdef void *p
        self.ctx = ctx
        self.nbytes = n
        if n == 0:
            return
        p = <void *> &data[0]
        ctx.use()
        with nogil:
            rc = drv.cuMemHostRegister(p, n, drv.CU_MEMHOSTREGISTER_PORTABLE | drv.CU_MEMHOSTREGISTER_READ_ONLY)
            if rc != drv.CUDA_SUCCESS and rc != drv.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
                rc = drv.cuMemHostRegister(p, n, drv.CU_MEMHOSTREGISTER_PORTABLE)
        if rc == drv.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
            return                       # pinned by its other registration, which unpins it
        check(rc, f"cuMemHostRegister({n} bytes)")
        self.ptr = p

    @property
    def owned(self):
        """Whether this object pinned the pages (False: they were pinned already)."""
        return self.ptr != NULL

    def close(self):
        if self.ptr != NULL:
            self.ctx.use()
            drv.cuMemHostUnregister(self.ptr)
            self.ptr = NULL

    def __dealloc__(self):
        if self.ptr != NULL and self.ctx is not None and self.ctx.ctx != NULL:
            drv.cuCtxSetCurrent(self.ctx.ctx)
            drv.cuMemHostUnregister(self.ptr)
