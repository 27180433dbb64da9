"""tests/fuzz/child_runner.py: runs one fuzz target of this folder in a child interpreter, so
that a crash (the bug a fuzzer exists to find) fails that test instead of ending the run.

    python tests/fuzz/child_runner.py MODULE FUNCTION   # runs MODULE.FUNCTION()
"""

import importlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_target(module, function, timeout=600):
    """(returncode, output) of MODULE.FUNCTION() run in a fresh interpreter."""
    env = dict(os.environ, PYTHONFAULTHANDLER="1")
    env["PYTHONPATH"] = os.pathsep.join([HERE, os.path.dirname(HERE),
                                         env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, os.path.join(HERE, "child_runner.py"), module,
                        function], capture_output=True, text=True, timeout=timeout, env=env)
    return r.returncode, r.stdout + r.stderr


if __name__ == "__main__":
    sys.path[:0] = [HERE, os.path.dirname(HERE)]
    getattr(importlib.import_module(sys.argv[1]), sys.argv[2])()
    print("TARGET PASSED")
