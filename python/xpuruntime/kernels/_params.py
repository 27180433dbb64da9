"""python/xpuruntime/kernels/_params.py: CuPy's parameter syntax ("T x, raw float32 y") and
type inference for ElementwiseKernel and ReductionKernel.

- A parameter is ``[raw] type name``. The type is a NumPy dtype name spelt exactly as NumPy
  names it (``float32``, ``int64``, ``bool``, ``complex64``; also ``bfloat16``) or a
  one-letter placeholder (``T``) that the arguments decide.
- Placeholders are decided by the arrays passed: outputs first, then inputs, in order; every
  later array for the same placeholder must have the same dtype (CuPy's rule: no promotion).
  Scalars decide nothing: they take the type of their parameter.
- ``raw`` parameters are not indexed by the loop: the operation indexes them itself
  (``x[i]``, ``x.size()``) and they take no part in broadcasting.
"""

import re

# NumPy's dtype names -> the C++ type of the generated source. The half and complex types
# come from the device headers of xpuruntime's own kernels (cpp/kernels/xrt).
C_TYPES = {
    "bool": "bool",
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "long long",
    "uint8": "unsigned char",
    "uint16": "unsigned short",
    "uint32": "unsigned int",
    "uint64": "unsigned long long",
    "float16": "xrt::float16",
    "bfloat16": "xrt::bfloat16",
    "float32": "float",
    "float64": "double",
    "complex64": "complex<float>",
    "complex128": "complex<double>",
}

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
# Names the generated code uses: the loop index, the indexer, and everything starting "_".
_RESERVED = {"i", "n"}


class Param:
    """One parsed parameter: ``name``, ``dtype`` (a dtype name, or None for a placeholder),
    ``placeholder`` (the letter, or None), ``raw``."""

    __slots__ = ("name", "dtype", "placeholder", "raw")

    def __init__(self, name, dtype, placeholder, raw):
        self.name, self.dtype, self.placeholder, self.raw = name, dtype, placeholder, raw

    def __repr__(self):
        kind = self.dtype or self.placeholder
        return f"Param({'raw ' if self.raw else ''}{kind} {self.name})"


def parse_params(text, what="in_params"):
    """The parameters of a CuPy parameter string, as a tuple of Param; ValueError on bad
    syntax, an unknown type or a reserved name."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a string like 'T x, raw float32 y', got {type(text)}")
    params = []
    if not text.strip():
        return ()
    for part in text.split(","):
        words = part.split()
        if len(words) < 2:
            raise ValueError(f"{what}: '{part.strip()}' is not 'type name' (syntax error)")
        *modifiers, type_name, name = words
        raw = False
        for m in modifiers:
            if m != "raw":
                raise ValueError(f"{what}: unknown keyword '{m}' in '{part.strip()}'")
            raw = True
        if not _NAME.match(name):
            raise ValueError(f"{what}: '{name}' is not a valid parameter name")
        if name in _RESERVED or name.startswith("_"):
            raise ValueError(f"{what}: the name '{name}' is reserved (i, n and names starting "
                             f"with '_' are the generated code's)")
        if len(type_name) == 1:
            if not type_name.isalpha():
                raise ValueError(f"{what}: '{type_name}' is not a type placeholder")
            params.append(Param(name, None, type_name, raw))
        elif type_name in C_TYPES:
            params.append(Param(name, type_name, None, raw))
        else:
            raise ValueError(f"{what}: unknown type '{type_name}' for '{name}' (a NumPy dtype "
                             f"name such as float32, or a one-letter placeholder such as T)")
    return tuple(params)


def check_unique(*param_lists):
    seen = set()
    for params in param_lists:
        for p in params:
            if p.name in seen:
                raise ValueError(f"the parameter name '{p.name}' is used twice")
            seen.add(p.name)


def decide_types(in_params, out_params, in_dtypes, out_dtypes):
    """The dtype name of every parameter, and the placeholders' dtypes: (in_types,
    out_types, {letter: dtype}). in_dtypes/out_dtypes hold a dtype name per array argument
    and None per scalar; out_dtypes is None when no outputs were passed. TypeError when an
    array's dtype contradicts its parameter or an earlier array of the same placeholder,
    or a placeholder is decided by no array."""
    placeholders = {}

    def decide(p, dtype):
        if dtype is None:
            return
        if p.dtype is not None:
            if dtype != p.dtype:
                raise TypeError(f"argument '{p.name}' must be {p.dtype}, got {dtype} (no "
                                f"implicit casts, as in CuPy)")
        elif p.placeholder in placeholders:
            if placeholders[p.placeholder] != dtype:
                raise TypeError(f"argument '{p.name}' is {dtype}, but type {p.placeholder} "
                                f"is already {placeholders[p.placeholder]}")
        else:
            placeholders[p.placeholder] = dtype

    if out_dtypes is not None:
        for p, d in zip(out_params, out_dtypes):
            if d is None:
                raise TypeError(f"output '{p.name}' must be an array, not a scalar")
            decide(p, d)
    for p, d in zip(in_params, in_dtypes):
        decide(p, d)

    def resolve(p):
        if p.dtype is not None:
            return p.dtype
        if p.placeholder not in placeholders:
            raise TypeError(f"cannot decide type {p.placeholder} of '{p.name}': no array "
                            f"argument has that type (scalars do not decide a type)")
        return placeholders[p.placeholder]

    return (tuple(resolve(p) for p in in_params), tuple(resolve(p) for p in out_params),
            placeholders)
