"""python/xpuruntime/inference/engines/_ort_binding.py: one thread's IO binding of an ONNX
Runtime session, and the binding and run calls reached past ORT's Python wrappers."""

from ... import _core


class Lane:
    """Note [ORT threads]: what one thread's runs need of their own. ORT's sessions run from
    several threads at once, but an IOBinding and an event are one caller's: each thread gets
    its binding, its record of what it bound, and its two events."""

    __slots__ = ("c", "bound", "plans", "out_names", "ready", "done")

    def __init__(self, ort, sess, target, cuda):
        self.c = NativeCalls(ort, sess, sess.io_binding(), target)
        self.bound = {}             # input name -> (pointer, shape) bound last
        self.plans = {}             # (input shapes, names asked) -> the outputs to bind
        self.out_names = None       # the output names a plan bound last (None: clear first)
        self.ready = _core._cuda.Event() if cuda else None
        self.done = _core._cuda.Event() if cuda else None


class NativeCalls:
    """The binding and run calls of ORT's compiled module, reached past its Python wrappers
    when they are there: the wrappers cost more per run than our whole session (ORT 1.32's
    ``run_with_iobinding`` reads a run-config entry for WebGPU capture, ~25 us), and they
    do nothing we need. Falls back to the public API where the private one is missing."""

    __slots__ = ("bind_input", "bind_output", "bind_output_to_ort", "clear_outputs", "run",
                 "get_outputs")

    def __init__(self, ort, sess, binding, target):
        device_type = "cuda" if target.kind == "cuda" else "cpu"
        device_id = target.index if target.kind == "cuda" else 0
        c_sess = getattr(sess, "_sess", None)
        c_binding = getattr(binding, "_iobinding", None)
        try:
            c_device = ort.OrtDevice.make(device_type, device_id)._get_c_device()
        except AttributeError:
            c_device = None
        if c_sess is None or c_binding is None or c_device is None:
            self._public(sess, binding, device_type, device_id)
            return
        self.bind_input = lambda name, elem, shape, ptr: c_binding.bind_input(
            name, c_device, elem, shape, ptr)
        self.bind_output = lambda name, elem, shape, ptr: c_binding.bind_output(
            name, c_device, elem, shape, ptr)
        self.bind_output_to_ort = lambda name: c_binding.bind_output(name, c_device)
        self.clear_outputs = c_binding.clear_binding_outputs
        self.run = lambda options: c_sess.run_with_iobinding(c_binding, options)
        self.get_outputs = c_binding.get_outputs

    def _public(self, sess, binding, device_type, device_id):
        self.bind_input = lambda name, elem, shape, ptr: binding.bind_input(
            name, device_type, device_id, elem, shape, ptr)
        self.bind_output = lambda name, elem, shape, ptr: binding.bind_output(
            name, device_type, device_id, elem, shape, ptr)
        self.bind_output_to_ort = lambda name: binding.bind_output(name, device_type, device_id)
        self.clear_outputs = binding.clear_binding_outputs
        self.run = lambda options: sess.run_with_iobinding(binding, options)
        self.get_outputs = binding.get_outputs
