"""The NVIDIA backend's architectures.  Shared memory is the most one block may opt in to
(CUDA programming guide, compute capabilities table); matrix instructions: `mma_v1`
(mma.sync m8n8k4, Volta), `mma_v2` (mma.sync m16n8k*, from Turing: m16n8k8 on sm_75),
`wgmma` (warpgroup MMA: sm_90a only), `tcgen05` (Blackwell datacenter: sm_100a only).  Features:
the PTX ISA version LLVM emits (8.0 up to sm_90a; newer chips need newer PTX)."""
from tilework.lowering.target import Target

from ..registry import register_backend
from .compiler import NVIDIABackend

KIB = 1024
_TABLE = [  # arch, capability, shared memory per block, matrix instructions, PTX
    ("sm_70", 70, 96 * KIB, ("mma_v1",), "+ptx80"),
    ("sm_72", 72, 96 * KIB, ("mma_v1",), "+ptx80"),
    ("sm_75", 75, 64 * KIB, ("mma_v2",), "+ptx80"),
    ("sm_80", 80, 163 * KIB, ("mma_v2",), "+ptx80"),
    ("sm_86", 86, 99 * KIB, ("mma_v2",), "+ptx80"),
    ("sm_87", 87, 163 * KIB, ("mma_v2",), "+ptx80"),
    ("sm_89", 89, 99 * KIB, ("mma_v2",), "+ptx80"),
    ("sm_90", 90, 227 * KIB, ("mma_v2",), "+ptx80"),
    ("sm_90a", 90, 227 * KIB, ("mma_v2", "wgmma"), "+ptx80"),
    ("sm_100", 100, 227 * KIB, ("mma_v2",), "+ptx86"),  # what the runtime names a B200
    ("sm_100a", 100, 227 * KIB, ("mma_v2", "tcgen05"), "+ptx86"),
    ("sm_120", 120, 99 * KIB, ("mma_v2",), "+ptx87"),
]
ARCHS = {a: Target("nvidia", a, cap, 32, smem, mma, ptx) for a, cap, smem, mma, ptx in _TABLE}


def _load():
    return NVIDIABackend


register_backend("nvidia", ARCHS, _load, oldest="sm_70")
