"""python/xpuruntime/_array_api/__init__.py: the Array API namespace's Python side, one module
per category of the standard. The functions themselves are native (``_core``); the package
``xpuruntime`` gathers them with these modules into the namespace.

- ``_signatures.py``: the standard's signatures, given to every native function.
- ``_dtypes.py``: dtypes to and from NumPy, ``result_type``.
- ``_data_type_functions.py``: ``finfo``, ``iinfo``, ``can_cast``, ``isdtype``.
- ``_set_functions.py``: ``unique_*`` and their named tuples.
- ``_constants.py``: ``e``, ``inf``, ``nan``, ``newaxis``, ``pi``.
- ``_info.py``: ``__array_namespace_info__``.
- ``_tensor.py``: the Tensor methods that are Python by nature (printing, ``__array__``).
"""
