"""The optional C extension of attngeom (the package's metadata is in pyproject.toml).

``attngeom.kernels._kl_statistics_cpu``: the full-Sigma statistics of the GT structured kernel
on the CPU (attngeom/kernels/kl_statistics_cpu.py).  It needs a C compiler with GCC's vector
extensions (GCC or Clang); where the build fails, pip installs attngeom without it and the
kernel uses the library calls (the same numbers, slower).
"""

import sys

from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "attngeom.kernels._kl_statistics_cpu",
    sources=["attngeom/kernels/csrc/kl_statistics_cpu.c"],
    depends=["attngeom/kernels/csrc/kl_statistics_body.h"],
    extra_compile_args=[] if sys.platform == "win32" else ["-O3"],
    optional=True)])
