"""python/xpuruntime/_array_api/_descriptions.py: one sentence per public function, shown by
help() and ``__doc__`` under the signature (``_signatures.wrap`` attaches them). The
standard's page for each function is the full contract; these say what the function is for."""


def _table(text):
    out = {}
    for line in text.strip().splitlines():
        name, _, sentence = line.partition(": ")
        out[name.strip()] = sentence.strip()
    return out


NAMESPACE = _table("""
arange: Evenly spaced values in [start, stop) with the given step.
asarray: Converts a Python scalar, nested sequence, buffer, DLPack producer or tensor to a tensor.
empty: A tensor of the given shape with uninitialised contents.
empty_like: An uninitialised tensor with the shape (and, by default, dtype and device) of x.
eye: A 2-D tensor with ones on the k-th diagonal and zeros elsewhere.
from_dlpack: A tensor sharing the memory of a DLPack producer (NumPy, PyTorch, CuPy, JAX, ...).
full: A tensor of the given shape filled with fill_value.
full_like: A tensor with the shape of x filled with fill_value.
linspace: num evenly spaced values over [start, stop] (or [start, stop) without the endpoint).
meshgrid: Coordinate grids from one-dimensional coordinate tensors.
ones: A tensor of the given shape filled with ones.
ones_like: A tensor with the shape of x filled with ones.
tril: The lower triangle of the matrices in x (elements above the k-th diagonal set to zero).
triu: The upper triangle of the matrices in x (elements below the k-th diagonal set to zero).
zeros: A tensor of the given shape filled with zeros.
zeros_like: A tensor with the shape of x filled with zeros.
astype: x converted to dtype (and moved to device when given); copy=False avoids a needless copy.
can_cast: Whether from_ can be cast to the dtype `to` by the standard's promotion rules.
finfo: Machine limits of a floating-point dtype (bits, eps, max, min, smallest_normal).
iinfo: Machine limits of an integer dtype (bits, max, min).
isdtype: Whether a dtype belongs to a kind ('bool', 'integral', 'real floating', ...).
result_type: The dtype the standard's promotion table gives for these arrays and dtypes.
abs: The absolute value of each element (the magnitude for complex numbers).
acos: The inverse cosine of each element.
acosh: The inverse hyperbolic cosine of each element.
add: The sum of x1 and x2, element by element (broadcast).
asin: The inverse sine of each element.
asinh: The inverse hyperbolic sine of each element.
atan: The inverse tangent of each element.
atan2: The angle of the point (x2, x1), quadrant-aware, element by element.
atanh: The inverse hyperbolic tangent of each element.
bitwise_and: The bitwise AND of x1 and x2 (integers and bools).
bitwise_left_shift: x1 shifted left by x2 bits.
bitwise_invert: The bitwise NOT of each element (integers and bools).
bitwise_or: The bitwise OR of x1 and x2 (integers and bools).
bitwise_right_shift: x1 shifted right by x2 bits (arithmetic for signed integers).
bitwise_xor: The bitwise XOR of x1 and x2 (integers and bools).
ceil: The smallest integer value not less than each element.
clip: Each element of x limited to [min, max].
conj: The complex conjugate of each element.
copysign: The magnitude of x1 with the sign of x2.
cos: The cosine of each element (radians).
cosh: The hyperbolic cosine of each element.
divide: x1 / x2 element by element (true division).
equal: x1 == x2 element by element.
exp: The exponential e**x of each element.
expm1: exp(x) - 1, accurate for small x.
floor: The largest integer value not greater than each element.
floor_divide: x1 / x2 rounded towards negative infinity.
greater: x1 > x2 element by element.
greater_equal: x1 >= x2 element by element.
hypot: sqrt(x1**2 + x2**2) without undue overflow or underflow.
imag: The imaginary part of each complex element.
isfinite: Whether each element is finite.
isinf: Whether each element is infinite.
isnan: Whether each element is NaN.
less: x1 < x2 element by element.
less_equal: x1 <= x2 element by element.
log: The natural logarithm of each element.
log1p: log(1 + x), accurate for small x.
log2: The base-2 logarithm of each element.
log10: The base-10 logarithm of each element.
logaddexp: log(exp(x1) + exp(x2)) without overflow.
logical_and: The logical AND of x1 and x2 (as bools).
logical_not: The logical NOT of each element (as a bool).
logical_or: The logical OR of x1 and x2 (as bools).
logical_xor: The logical XOR of x1 and x2 (as bools).
maximum: The larger of x1 and x2, element by element (NaN propagates).
minimum: The smaller of x1 and x2, element by element (NaN propagates).
multiply: The product of x1 and x2, element by element.
negative: -x for each element.
nextafter: The next representable value after x1 in the direction of x2.
not_equal: x1 != x2 element by element.
positive: +x for each element (a copy).
pow: x1 raised to the power x2, element by element.
real: The real part of each element.
reciprocal: 1 / x for each element.
remainder: The remainder of x1 / x2 with the sign of x2 (Python's %).
round: Each element rounded to the nearest integer, halves to even.
sign: The sign of each element (-1, 0 or 1; x / |x| for complex numbers).
signbit: Whether the sign bit of each element is set.
sin: The sine of each element (radians).
sinh: The hyperbolic sine of each element.
square: x * x for each element.
sqrt: The square root of each element.
subtract: x1 - x2 element by element.
tan: The tangent of each element (radians).
tanh: The hyperbolic tangent of each element.
trunc: Each element rounded towards zero.
take: The elements of x at the given indices along an axis.
take_along_axis: Values of x picked by an index tensor that matches x along the other axes.
matmul: The matrix product of x1 and x2 (batched over leading axes, vectors promoted).
matrix_transpose: The matrices of x transposed (the last two axes swapped).
tensordot: The tensor contraction of x1 and x2 over the given axes.
vecdot: The dot product of vectors along an axis (the first operand conjugated).
broadcast_arrays: The arrays broadcast against each other (read-only views).
broadcast_shapes: The shape the given shapes broadcast to.
broadcast_to: x broadcast to a shape (a read-only view).
concat: The arrays joined along an existing axis.
expand_dims: x with a new axis of length one at the given position.
flip: x with the order of elements reversed along the given axes.
moveaxis: x with axes moved to new positions.
permute_dims: x with its axes permuted (a view).
repeat: Each element of x repeated along an axis.
reshape: x with a new shape and the same elements in row-major order (a view when possible).
roll: x with its elements shifted cyclically along the given axes.
squeeze: x without the given axes of length one.
stack: The arrays joined along a new axis.
tile: x repeated as a tile the given number of times along each axis.
unstack: The slices of x along an axis, as a tuple of tensors.
argmax: The index of the largest element (along an axis).
argmin: The index of the smallest element (along an axis).
count_nonzero: The number of non-zero elements (along the given axes).
nonzero: The indices of the non-zero elements, one tensor per axis.
searchsorted: Where to insert x2 into the sorted x1 to keep it sorted.
where: Elements of x1 where condition holds, of x2 elsewhere.
isin: Whether each element of x1 occurs in x2.
unique_all: The unique values with their first indices, inverse indices and counts.
unique_counts: The unique values and how often each occurs.
unique_inverse: The unique values and the indices that rebuild x from them.
unique_values: The unique values of x.
argsort: The indices that sort x along an axis.
sort: x sorted along an axis.
cumulative_prod: The running product along an axis.
cumulative_sum: The running sum along an axis.
max: The largest element (along the given axes).
mean: The arithmetic mean (along the given axes).
min: The smallest element (along the given axes).
prod: The product of the elements (along the given axes).
std: The standard deviation (along the given axes, with a correction for degrees of freedom).
sum: The sum of the elements (along the given axes).
var: The variance (along the given axes, with a correction for degrees of freedom).
all: Whether every element is true (along the given axes).
any: Whether some element is true (along the given axes).
diff: The n-th discrete difference along an axis.
""")

LINALG = _table("""
cholesky: The Cholesky factor of each symmetric (Hermitian) positive-definite matrix.
cross: The cross product of 3-element vectors along an axis.
det: The determinant of each square matrix.
diagonal: The k-th diagonal of each matrix.
eigh: Eigenvalues and eigenvectors of each symmetric (Hermitian) matrix.
eigvalsh: Eigenvalues of each symmetric (Hermitian) matrix.
eig: Eigenvalues and eigenvectors of each square matrix.
eigvals: Eigenvalues of each square matrix.
inv: The inverse of each square matrix.
matmul: The matrix product of x1 and x2.
matrix_norm: A matrix norm of each matrix ('fro', 'nuc', 1, 2, inf, ...).
matrix_power: Each square matrix raised to an integer power.
matrix_rank: The rank of each matrix (from its singular values).
matrix_transpose: The matrices of x transposed.
outer: The outer product of two vectors.
pinv: The Moore-Penrose pseudo-inverse of each matrix.
qr: The QR decomposition of each matrix.
slogdet: The sign and log of the absolute determinant of each square matrix.
solve: The solution X of A @ X = B for each square matrix A.
svd: The singular value decomposition of each matrix.
svdvals: The singular values of each matrix.
tensordot: The tensor contraction of x1 and x2 over the given axes.
trace: The sum of the k-th diagonal of each matrix.
vecdot: The dot product of vectors along an axis.
vector_norm: A vector norm (along the given axes).
""")

FFT = _table("""
fft: The one-dimensional discrete Fourier transform.
ifft: The one-dimensional inverse discrete Fourier transform.
fftn: The n-dimensional discrete Fourier transform.
ifftn: The n-dimensional inverse discrete Fourier transform.
rfft: The one-dimensional discrete Fourier transform of real input (non-negative frequencies).
irfft: The inverse of rfft: a real signal from its non-negative frequencies.
rfftn: The n-dimensional discrete Fourier transform of real input.
irfftn: The inverse of rfftn.
hfft: The discrete Fourier transform of a signal with Hermitian symmetry (a real spectrum).
ihfft: The inverse of hfft.
fftfreq: The sample frequencies of an fft of length n.
rfftfreq: The sample frequencies of an rfft of length n.
fftshift: The zero frequency moved to the centre of the spectrum.
ifftshift: The inverse of fftshift.
""")
