"""python/xpuruntime/_array_api/_signatures.py: the Array API signatures of the native
functions.

Note [Signatures]: nanobind functions cannot be inspected, so every native public function
is wrapped in `_core.Function` (a vectorcall forwarder, no Python frame per call) that
carries its signature as text, positional-only and keyword-only markers included, as the
standard writes it. The texts below come from the 2025.12 stubs, except that a leading
keyword-only parameter which NumPy takes by position at the same place is positional here
too (Note [NumPy's positional arguments] in cpp/bindings/bind_reductions.cpp); functions
that are not in the standard get theirs from nanobind's own description.
"""

import inspect
import re

from .. import _core

NAMESPACE = {
    'arange': '(start, /, stop=None, step=1, dtype=None, *, device=None)',
    'asarray': '(obj, /, dtype=None, *, device=None, copy=None)',
    'empty': '(shape, dtype=None, *, device=None)',
    'empty_like': '(x, /, dtype=None, *, device=None)',
    'eye': '(n_rows, n_cols=None, /, k=0, dtype=None, *, device=None)',
    'from_dlpack': '(x, /, *, device=None, copy=None)',
    'full': '(shape, fill_value, dtype=None, *, device=None)',
    'full_like': '(x, /, fill_value, dtype=None, *, device=None)',
    'linspace': '(start, stop, /, num, *, dtype=None, device=None, endpoint=True)',
    'meshgrid': "(*arrays, indexing='xy')",
    'ones': '(shape, dtype=None, *, device=None)',
    'ones_like': '(x, /, dtype=None, *, device=None)',
    'tril': '(x, /, k=0)',
    'triu': '(x, /, k=0)',
    'zeros': '(shape, dtype=None, *, device=None)',
    'zeros_like': '(x, /, dtype=None, *, device=None)',
    'astype': '(x, dtype, /, *, copy=True, device=None)',
    'can_cast': '(from_, to, /)',
    'finfo': '(type, /)',
    'iinfo': '(type, /)',
    'isdtype': '(dtype, kind)',
    'result_type': '(*arrays_and_dtypes)',
    'abs': '(x, /)',
    'acos': '(x, /)',
    'acosh': '(x, /)',
    'add': '(x1, x2, /)',
    'asin': '(x, /)',
    'asinh': '(x, /)',
    'atan': '(x, /)',
    'atan2': '(x1, x2, /)',
    'atanh': '(x, /)',
    'bitwise_and': '(x1, x2, /)',
    'bitwise_left_shift': '(x1, x2, /)',
    'bitwise_invert': '(x, /)',
    'bitwise_or': '(x1, x2, /)',
    'bitwise_right_shift': '(x1, x2, /)',
    'bitwise_xor': '(x1, x2, /)',
    'ceil': '(x, /)',
    'clip': '(x, /, min=None, max=None)',
    'conj': '(x, /)',
    'copysign': '(x1, x2, /)',
    'cos': '(x, /)',
    'cosh': '(x, /)',
    'divide': '(x1, x2, /)',
    'equal': '(x1, x2, /)',
    'exp': '(x, /)',
    'expm1': '(x, /)',
    'floor': '(x, /)',
    'floor_divide': '(x1, x2, /)',
    'greater': '(x1, x2, /)',
    'greater_equal': '(x1, x2, /)',
    'hypot': '(x1, x2, /)',
    'imag': '(x, /)',
    'isfinite': '(x, /)',
    'isinf': '(x, /)',
    'isnan': '(x, /)',
    'less': '(x1, x2, /)',
    'less_equal': '(x1, x2, /)',
    'log': '(x, /)',
    'log1p': '(x, /)',
    'log2': '(x, /)',
    'log10': '(x, /)',
    'logaddexp': '(x1, x2, /)',
    'logical_and': '(x1, x2, /)',
    'logical_not': '(x, /)',
    'logical_or': '(x1, x2, /)',
    'logical_xor': '(x1, x2, /)',
    'maximum': '(x1, x2, /)',
    'minimum': '(x1, x2, /)',
    'multiply': '(x1, x2, /)',
    'negative': '(x, /)',
    'nextafter': '(x1, x2, /)',
    'not_equal': '(x1, x2, /)',
    'positive': '(x, /)',
    'pow': '(x1, x2, /)',
    'real': '(x, /)',
    'reciprocal': '(x, /)',
    'remainder': '(x1, x2, /)',
    'round': '(x, /)',
    'sign': '(x, /)',
    'signbit': '(x, /)',
    'sin': '(x, /)',
    'sinh': '(x, /)',
    'square': '(x, /)',
    'sqrt': '(x, /)',
    'subtract': '(x1, x2, /)',
    'tan': '(x, /)',
    'tanh': '(x, /)',
    'trunc': '(x, /)',
    'take': '(x, indices, /, axis=None)',
    'take_along_axis': '(x, indices, /, axis=-1)',
    'matmul': '(x1, x2, /)',
    'matrix_transpose': '(x, /)',
    'tensordot': '(x1, x2, /, axes=2)',
    'vecdot': '(x1, x2, /, *, axis=-1)',
    'broadcast_arrays': '(*arrays)',
    'broadcast_shapes': '(*shapes)',
    'broadcast_to': '(x, /, shape)',
    'concat': '(arrays, /, axis=0)',
    'expand_dims': '(x, /, axis)',
    'flip': '(x, /, axis=None)',
    'moveaxis': '(x, source, destination, /)',
    'permute_dims': '(x, /, axes)',
    'repeat': '(x, repeats, /, axis=None)',
    'reshape': '(x, /, shape, *, copy=None)',
    'roll': '(x, /, shift, axis=None)',
    'squeeze': '(x, /, axis)',
    'stack': '(arrays, /, axis=0)',
    'tile': '(x, repetitions, /)',
    'unstack': '(x, /, axis=0)',
    'argmax': '(x, /, axis=None, *, keepdims=False)',
    'argmin': '(x, /, axis=None, *, keepdims=False)',
    'count_nonzero': '(x, /, axis=None, *, keepdims=False)',
    'nonzero': '(x, /)',
    'searchsorted': "(x1, x2, /, side='left', sorter=None)",
    'where': '(condition, x1=None, x2=None, /)',
    'isin': '(x1, x2, /, *, invert=False)',
    'unique_all': '(x, /)',
    'unique_counts': '(x, /)',
    'unique_inverse': '(x, /)',
    'unique_values': '(x, /)',
    'argsort': '(x, /, axis=-1, *, descending=False, stable=True)',
    'sort': '(x, /, axis=-1, *, descending=False, stable=True)',
    'cumulative_prod': '(x, /, axis=None, dtype=None, *, include_initial=False)',
    'cumulative_sum': '(x, /, axis=None, dtype=None, *, include_initial=False)',
    'max': '(x, /, axis=None, *, keepdims=False)',
    'mean': '(x, /, axis=None, *, keepdims=False)',
    'min': '(x, /, axis=None, *, keepdims=False)',
    'prod': '(x, /, axis=None, dtype=None, *, keepdims=False)',
    'std': '(x, /, axis=None, *, correction=0.0, keepdims=False)',
    'sum': '(x, /, axis=None, dtype=None, *, keepdims=False)',
    'var': '(x, /, axis=None, *, correction=0.0, keepdims=False)',
    'all': '(x, /, axis=None, *, keepdims=False)',
    'any': '(x, /, axis=None, *, keepdims=False)',
    'diff': '(x, /, n=1, axis=-1, prepend=None, append=None)',
}

LINALG = {
    'cholesky': '(x, /, *, upper=False)',
    'cross': '(x1, x2, /, *, axis=-1)',
    'det': '(x, /)',
    'diagonal': '(x, /, *, offset=0)',
    'eigh': '(x, /)',
    'eigvalsh': '(x, /)',
    'eig': '(x, /)',
    'eigvals': '(x, /)',
    'inv': '(x, /)',
    'matmul': '(x1, x2, /)',
    'matrix_norm': "(x, /, *, keepdims=False, ord='fro')",
    'matrix_power': '(x, n, /)',
    'matrix_rank': '(x, /, *, rtol=None)',
    'matrix_transpose': '(x, /)',
    'outer': '(x1, x2, /)',
    'pinv': '(x, /, *, rtol=None)',
    'qr': "(x, /, mode='reduced')",
    'slogdet': '(x, /)',
    'solve': '(x1, x2, /)',
    'svd': '(x, /, full_matrices=True)',
    'svdvals': '(x, /)',
    'tensordot': '(x1, x2, /, axes=2)',
    'trace': '(x, /, *, offset=0, dtype=None)',
    'vecdot': '(x1, x2, /, *, axis=-1)',
    'vector_norm': '(x, /, *, axis=None, keepdims=False, ord=2)',
}

FFT = {
    'fft': "(x, /, n=None, axis=-1, norm='backward')",
    'ifft': "(x, /, n=None, axis=-1, norm='backward')",
    'fftn': "(x, /, s=None, axes=None, norm='backward')",
    'ifftn': "(x, /, s=None, axes=None, norm='backward')",
    'rfft': "(x, /, n=None, axis=-1, norm='backward')",
    'irfft': "(x, /, n=None, axis=-1, norm='backward')",
    'rfftn': "(x, /, s=None, axes=None, norm='backward')",
    'irfftn': "(x, /, s=None, axes=None, norm='backward')",
    'hfft': "(x, /, n=None, axis=-1, norm='backward')",
    'ihfft': "(x, /, n=None, axis=-1, norm='backward')",
    'fftfreq': '(n, /, d=1.0, *, dtype=None, device=None)',
    'rfftfreq': '(n, /, d=1.0, *, dtype=None, device=None)',
    'fftshift': '(x, /, axes=None)',
    'ifftshift': '(x, /, axes=None)',
}

TENSOR_METHODS = {
    '__abs__': '(self, /)',
    '__add__': '(self, other, /)',
    '__and__': '(self, other, /)',
    '__array_namespace__': '(self, /, *, api_version=None)',
    '__bool__': '(self, /)',
    '__complex__': '(self, /)',
    '__dlpack__': '(self, /, *, stream=None, max_version=None, dl_device=None, copy=None)',
    '__dlpack_device__': '(self, /)',
    '__eq__': '(self, other, /)',
    '__float__': '(self, /)',
    '__floordiv__': '(self, other, /)',
    '__ge__': '(self, other, /)',
    '__getitem__': '(self, key, /)',
    '__gt__': '(self, other, /)',
    '__index__': '(self, /)',
    '__int__': '(self, /)',
    '__invert__': '(self, /)',
    '__le__': '(self, other, /)',
    '__lshift__': '(self, other, /)',
    '__lt__': '(self, other, /)',
    '__matmul__': '(self, other, /)',
    '__mod__': '(self, other, /)',
    '__mul__': '(self, other, /)',
    '__ne__': '(self, other, /)',
    '__neg__': '(self, /)',
    '__or__': '(self, other, /)',
    '__pos__': '(self, /)',
    '__pow__': '(self, other, /)',
    '__rshift__': '(self, other, /)',
    '__setitem__': '(self, key, value, /)',
    '__sub__': '(self, other, /)',
    '__truediv__': '(self, other, /)',
    '__xor__': '(self, other, /)',
    'to_device': '(self, device, /, *, stream=None)',
    '__radd__': '(self, other, /)',
    '__iadd__': '(self, other, /)',
    '__rsub__': '(self, other, /)',
    '__isub__': '(self, other, /)',
    '__rmul__': '(self, other, /)',
    '__imul__': '(self, other, /)',
    '__rtruediv__': '(self, other, /)',
    '__itruediv__': '(self, other, /)',
    '__rfloordiv__': '(self, other, /)',
    '__ifloordiv__': '(self, other, /)',
    '__rmod__': '(self, other, /)',
    '__imod__': '(self, other, /)',
    '__rpow__': '(self, other, /)',
    '__ipow__': '(self, other, /)',
    '__rand__': '(self, other, /)',
    '__iand__': '(self, other, /)',
    '__ror__': '(self, other, /)',
    '__ior__': '(self, other, /)',
    '__rxor__': '(self, other, /)',
    '__ixor__': '(self, other, /)',
    '__rlshift__': '(self, other, /)',
    '__ilshift__': '(self, other, /)',
    '__rrshift__': '(self, other, /)',
    '__irshift__': '(self, other, /)',
    '__rmatmul__': '(self, other, /)',
    '__imatmul__': '(self, other, /)',
}


def parse(text):
    """inspect.Signature of a signature text such as "(x1, x2, /)"."""
    scope = {}
    exec(f"def _f{text}: pass", scope)  # noqa: S102 - texts are ours, not user input
    return inspect.signature(scope["_f"])


_NB_PARAM = re.compile(r"^(\*{0,2}\w+)(?:\s*:\s*[^=]*?)?(?:\s*=\s*(.*))?$")


def _split_top_level(text):
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def text_from_nanobind(func):
    """A signature text from nanobind's __nb_signature__, annotations dropped."""
    try:
        (sig, _, defaults), *_ = func.__nb_signature__
    except (AttributeError, ValueError):
        return "(*args, **kwargs)"
    # nanobind writes defaults as \\N placeholders into the tuple of default values.
    sig = re.sub(r"\\(\d+)", lambda m: repr(defaults[int(m.group(1))]), sig)
    inner = sig[sig.index("(") + 1 : sig.rindex(")")]
    params = []
    for part in _split_top_level(inner):
        if part in ("*", "/"):
            params.append(part)
            continue
        m = _NB_PARAM.match(part)
        if not m:
            return "(*args, **kwargs)"
        name, default = m.group(1), m.group(2)
        if name == "self":
            params.append(name)
        else:
            params.append(name if default is None else f"{name}={default.strip()}")
    text = "(" + ", ".join(params) + ")"
    try:
        parse(text)
    except Exception:  # a default nanobind printed in a form Python cannot read back
        return "(*args, **kwargs)"
    return text


def _is_native(obj):
    return type(obj).__name__ in ("nb_func", "nb_method")


def wrap(func, name, qualname, module, text=None):
    if text is None:
        text = text_from_nanobind(func)
    sig = parse(text)
    positional_only = tuple(p.name for p in sig.parameters.values()
                            if p.kind is p.POSITIONAL_ONLY and p.name != "self")
    wrapped = _core._make_function(func, name, qualname, module, text, positional_only)
    description = _descriptions_of(module).get(name)
    if description:
        # nanobind's own __doc__ is its signature line, then the binding's docstring if any.
        _, _, body = (func.__doc__ or "").partition("\n")
        body = body.strip()
        wrapped.__doc__ = f"{name}{text}\n\n{description}" + (f"\n\n{body}" if body else "")
    return wrapped


def _descriptions_of(module):
    from . import _descriptions

    return {"xpuruntime": _descriptions.NAMESPACE, "xpuruntime.linalg": _descriptions.LINALG,
            "xpuruntime.fft": _descriptions.FFT}.get(module, {})


def install_namespace(namespace, table, module):
    """Wraps every native public function of namespace (a module's dict)."""
    for name, obj in list(namespace.items()):
        # A plain C function of _core (from_dlpack's fast entry) is wrapped where the table
        # gives its signature.
        plain = type(obj).__name__ == "builtin_function_or_method" and name in table
        if name.startswith("_") or not (_is_native(obj) or plain):
            continue
        namespace[name] = wrap(obj, name, name, module, table.get(name))


def install_methods(cls, table):
    for name, text in table.items():
        obj = cls.__dict__.get(name)
        if obj is not None and _is_native(obj):
            setattr(cls, name, wrap(obj, name, f"{cls.__name__}.{name}", cls.__module__, text))


_core._set_signature_parser(parse)
