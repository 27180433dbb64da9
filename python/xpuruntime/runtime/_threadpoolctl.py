"""python/xpuruntime/runtime/_threadpoolctl.py: xpuruntime's CPU thread pool as a library
threadpoolctl knows, so ``threadpool_info()`` lists it and ``threadpool_limits(n)`` limits it
(as it limits OpenBLAS and OpenMP). Registered at import when threadpoolctl is installed.

threadpoolctl finds a library among the loaded shared objects by its file name and checks
that it has the controller's symbols; the native module exports
``xpuruntime_get_num_threads`` and ``xpuruntime_set_num_threads`` for that.
"""

import sys


def register():
    """Registers the controller with threadpoolctl; False when threadpoolctl is absent or
    too old to take custom controllers (before 3.5)."""
    try:
        import threadpoolctl
    except ImportError:
        return False
    if not hasattr(threadpoolctl, "register") or not hasattr(threadpoolctl, "LibController"):
        return False

    class XpuRuntimeController(threadpoolctl.LibController):
        user_api = "xpuruntime"
        internal_api = "xpuruntime"
        # The extension module's file name: _core.cpython-311-x86_64-linux-gnu.so and such.
        filename_prefixes = ("_core.",)
        check_symbols = ("xpuruntime_get_num_threads", "xpuruntime_set_num_threads")

        def get_num_threads(self):
            return self.dynlib.xpuruntime_get_num_threads()

        def set_num_threads(self, num_threads):
            self.dynlib.xpuruntime_set_num_threads(int(num_threads))

        def get_version(self):
            from .. import _core

            return _core.__version__

    threadpoolctl.register(XpuRuntimeController)
    return True


class _RegisterOnImport:
    """A meta path finder that lets threadpoolctl import as usual, then registers our
    controller: importing threadpoolctl at our import would cost every user ~17 ms."""

    def find_spec(self, name, path=None, target=None):
        if name != "threadpoolctl":
            return None
        import importlib.machinery

        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_register(module):
            exec_module(module)
            register()

        spec.loader.exec_module = exec_then_register
        return spec


def install():
    """Registers now when threadpoolctl is loaded, else right after it is imported."""
    if "threadpoolctl" in sys.modules:
        register()
    elif not any(isinstance(f, _RegisterOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnImport())
