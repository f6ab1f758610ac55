"""`TensorDescriptor`, at Triton's module path (`triton.tools.tensor_descriptor`): a host-side
descriptor passed as a kernel argument.  The class lives in `tilework.language.descriptor`,
which the runtime (below `tools`) imports to recognize it."""
from ..language.descriptor import TensorDescriptor  # noqa: F401

__all__ = ["TensorDescriptor"]
