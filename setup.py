"""The optional C extensions of attngeom (the package's metadata is in pyproject.toml).

* ``attngeom.geometry_proofs.gauge.accelerated._kl_statistics_cpu``: the per-token statistics of the GT structured
  kernel on the CPU (attngeom/geometry_proofs/gauge/accelerated/kl_statistics_cpu.py).  It needs a C compiler with
  GCC's vector extensions (GCC or Clang).
* ``attngeom.kernels._softmax_cpu``: NumPy's float64 softmax with glibc's vector exp
  (attngeom/kernels/softmax_cpu.py); Linux on x86-64, linked to libmvec.

Where a build fails, pip installs attngeom without that module, and the code it would speed
up runs as before (the same numbers up to rounding, slower).
"""

import platform
import sys

from setuptools import Extension, setup

# -fno-wrapv: Python's own CFLAGS carry -fwrapv (signed overflow wraps), which cost the
# statistics kernel 4-8% (its loops' int indices cannot be assumed not to overflow); nothing
# here relies on wrapping
OPTIMIZE = [] if sys.platform == "win32" else ["-O3", "-fno-wrapv"]
EXTENSIONS = [Extension("attngeom.geometry_proofs.gauge.accelerated._kl_statistics_cpu",
                        sources=["attngeom/geometry_proofs/gauge/accelerated/csrc/kl_statistics_cpu.c"],
                        depends=["attngeom/geometry_proofs/gauge/accelerated/csrc/kl_statistics_body.h",
                                 "attngeom/geometry_proofs/gauge/accelerated/csrc/kl_statistics_variants.h"],
                        extra_compile_args=OPTIMIZE, optional=True)]
if sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64"):
    # softmax with glibc's vector exp (libmvec): a separate module, so that a system
    # without libmvec loses only this one
    EXTENSIONS.append(Extension("attngeom.kernels._softmax_cpu", sources=["attngeom/kernels/csrc/softmax_cpu.c"],
                                depends=["attngeom/kernels/csrc/softmax_body.h"],
                                libraries=["mvec", "m"], extra_compile_args=OPTIMIZE, optional=True))

setup(ext_modules=EXTENSIONS)
