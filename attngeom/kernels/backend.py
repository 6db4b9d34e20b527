"""One switch for the array backend (numpy / torch / jax) and the device (cpu / cuda).

This is the only module of attngeom that imports torch or jax, and it does so lazily, so
the library works with NumPy alone.  Computations written against a :class:`Backend`
(``be.asarray``, ``be.sum``, the ``@`` operator, fancy indexing) run unchanged on all
three.  Floats are float64 by default; exact arithmetic uses int64 residues.

A device that is not there fails clearly: ``get_backend("torch", "cuda")`` on a machine
without CUDA raises :class:`~attngeom.core.errors.BackendUnavailable` with one line.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from attngeom.core.errors import BackendUnavailable
from attngeom.kernels.threads import configure_torch

BACKENDS = ("numpy", "torch", "jax")
DEVICES = ("cpu", "cuda")

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class Backend:
    """An array namespace bound to a device.

    Attributes
    ----------
    name : {'numpy', 'torch', 'jax'}
    device : {'cpu', 'cuda'}
    module : the imported library (numpy, torch or jax.numpy)
    """

    name: str
    device: str
    module: Any
    _device_handle: Any = None

    # -- moving data -------------------------------------------------------------------
    def asarray(self, array, dtype: str = "float64"):
        """Copy a NumPy array (or nested list) to this backend, as float64 or int64."""
        import numpy as np
        array = np.asarray(array, dtype=dtype)
        if self.name == "numpy":
            return array
        if self.name == "torch":
            torch = self.module
            return torch.as_tensor(array, dtype=getattr(torch, dtype), device=self._device_handle)
        import jax
        return jax.device_put(self.module.asarray(array, dtype=dtype), self._device_handle)

    def to_numpy(self, array) -> np.ndarray:
        if self.name == "torch":
            return array.detach().cpu().numpy()
        import numpy as np
        return np.asarray(array)

    # -- the few operations whose spelling differs -------------------------------------
    def sum(self, array, axis: int):
        if self.name == "torch":
            return array.sum(dim=axis)
        return array.sum(axis=axis)

    def concat(self, arrays, axis: int):
        if self.name == "torch":
            return self.module.cat(arrays, dim=axis)
        return self.module.concatenate(arrays, axis=axis)

    def abs(self, array):
        return self.module.abs(array)

    def exp(self, array):
        return self.module.exp(array)

    def remainder(self, array, prime: int):
        if self.name == "torch":
            return self.module.remainder(array, prime)
        return self.module.mod(array, prime)

    def synchronize(self, *arrays) -> None:
        """Wait until queued work, and ``arrays`` in particular, is done (honest timings):
        torch on CUDA and jax everywhere dispatch asynchronously."""
        if self.name == "torch" and self.device == "cuda":
            self.module.cuda.synchronize()
        if self.name == "jax":
            for array in arrays:
                array.block_until_ready()

    def is_out_of_memory(self, error: BaseException) -> bool:
        """Whether ``error`` is the device running out of memory (torch's OutOfMemoryError,
        XLA's RESOURCE_EXHAUSTED), which a caller can answer with smaller batches."""
        if self.name == "torch":
            return isinstance(error, self.module.cuda.OutOfMemoryError)
        return self.name == "jax" and "RESOURCE_EXHAUSTED" in str(error)

    def release_memory(self) -> None:
        """Return cached device memory after an out-of-memory error (torch's caching
        allocator keeps it otherwise)."""
        if self.name == "torch" and self.device == "cuda":
            self.module.cuda.empty_cache()

    @property
    def memory_bytes(self) -> int | None:
        """Total memory of the CUDA device (bytes); None on the cpu, where the limits of
        the calling module apply."""
        if self.device != "cuda":
            return None
        if self.name == "torch":
            return int(self.module.cuda.get_device_properties(self._device_handle).total_memory)
        stats = self._device_handle.memory_stats() or {}
        return int(stats.get("bytes_limit", 0)) or None

    @property
    def label(self) -> str:
        return f"{self.name}-{self.device}"

    @property
    def library(self):
        """The top-level library (numpy, torch or jax), for its transforms: ``torch.func``,
        ``jax.vmap`` / ``jax.jacfwd`` (``module`` is ``jax.numpy`` for jax)."""
        if self.name == "jax":
            import jax
            return jax
        return self.module


@functools.lru_cache(maxsize=None)
def get_backend(name: str = "numpy", device: str = "cpu") -> Backend:
    """Return the backend ``name`` on ``device``, or raise BackendUnavailable with one line."""
    if name not in BACKENDS:
        raise BackendUnavailable(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    if device not in DEVICES:
        raise BackendUnavailable(f"unknown device {device!r}; choose cpu or cuda")
    if name == "numpy":
        if device != "cpu":
            raise BackendUnavailable("the numpy backend runs on the cpu only; use --backend torch or jax for cuda")
        import numpy as np
        return Backend("numpy", "cpu", np)
    if name == "torch":
        try:
            import torch
        except ImportError:
            raise BackendUnavailable("backend torch is not installed (pip install 'attngeom[torch]')") from None
        configure_torch(torch)                 # the thread plan of attngeom.kernels.threads
        if device == "cuda" and not torch.cuda.is_available():
            raise BackendUnavailable(f"--device cuda: torch {torch.__version__} sees no CUDA device")
        return Backend("torch", device, torch, torch.device(device))
    try:
        import jax
    except ImportError:
        raise BackendUnavailable("backend jax is not installed (pip install 'attngeom[jax]')") from None
    jax.config.update("jax_enable_x64", True)
    platform = "gpu" if device == "cuda" else "cpu"
    try:
        handle = jax.devices(platform)[0]
    except RuntimeError:
        raise BackendUnavailable(f"--device {device}: jax {jax.__version__} has no {platform} backend") from None
    return Backend("jax", device, jax.numpy, handle)
