"""cmake/stubgen.py: writes the type stubs of the _core extension with nanobind's stubgen, at
build time (CMakeLists.txt runs it after _core links).

    python cmake/stubgen.py MODULE_DIR OUTPUT_DIR

_core needs OpenBLAS loaded first (the package's __init__ does that through _loader), so this
loads it, then runs stubgen on _core and its submodules into OUTPUT_DIR/_core/. A build the
current interpreter cannot import (a sanitizer build, whose runtime must be preloaded, aborts
the importing process) gets no stubs and a warning, not a failed build: the work runs in a
child process.
"""

import ctypes
import os
import runpy
import subprocess
import sys


def main(module_dir, output_dir):
    r = subprocess.run([sys.executable, __file__, "--child", module_dir, output_dir])
    if r.returncode != 0:
        print(f"cmake/stubgen.py: no type stubs for _core (the import failed: {r.returncode})",
              file=sys.stderr)
    return 0


def child(module_dir, output_dir):
    import scipy_openblas64

    lib_dir = scipy_openblas64.get_lib_dir()
    for name in os.listdir(lib_dir):
        if name.startswith("libscipy_openblas") and ".so" in name:
            ctypes.CDLL(os.path.join(lib_dir, name), mode=ctypes.RTLD_GLOBAL)
    sys.argv = ["stubgen", "-q", "-i", module_dir, "-m", "_core", "-r", "-O", output_dir]
    runpy.run_module("nanobind.stubgen", run_name="__main__")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        sys.exit(child(sys.argv[2], sys.argv[3]))
    sys.exit(main(sys.argv[1], sys.argv[2]))
