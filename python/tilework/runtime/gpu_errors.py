"""The GPU runtimes' errors, apart from the runtimes (which import their GPU libraries), so
catching them imports neither."""


class CudaError(RuntimeError):
    pass


class HipError(RuntimeError):
    pass
