"""Random operands of the GPU dot tests (test_dot_gpu.py, test_dot_mma_gpu.py,
test_dot_wgmma_gpu.py), imported after their `pytest.importorskip("torch")`: int8 uniform over
its range, floats standard normal rounded to the dtype; a K-major operand is the transpose of
a contiguous tensor (a: k x m, b: n x k in memory)."""
import torch


def matmul_inputs(dt, m, k, n, a_kmajor=False, b_kmajor=False):
    """(a: m x k, b: k x n) CUDA tensors of torch dtype `dt`."""
    def make(r, c, kmajor):
        shape = (c, r) if kmajor else (r, c)
        if dt == torch.int8:
            t = torch.randint(-128, 128, shape, device="cuda", dtype=dt)
        else:
            t = torch.randn(shape, device="cuda").to(dt)
        return t.T if kmajor else t
    return make(m, k, a_kmajor), make(k, n, b_kmajor)
