"""tests/recording_kernel.py: a _RecordedKernel whose Python path records an empty replay
for every call it sees (Note [Calling a recorded kernel from C++]), for the tests and fuzz
targets of the C++ call path. No GPU needed: a replayed call with host tensors is refused
by the replay's launch (a ValueError naming the CUDA device), which shows that it ran."""

import xpuruntime as xrt


class RecordingKernel(xrt._core._cuda._RecordedKernel):
    def __init__(self):
        super().__init__()
        self.slow = 0  # calls that took the Python path
        kernel = xrt._core._cuda._UserKernel('extern "C" __global__ void k() {}', "k")
        self.replay = xrt._core._cuda._Replay(kernel, 1, 1, [None], [], [], None)

    def _call(self, *args, **kwargs):
        self.slow += 1
        self._remember(self.replay, 1, 1)
        return "slow"
