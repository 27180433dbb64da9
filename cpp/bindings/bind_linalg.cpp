// cpp/bindings/bind_linalg.cpp: the main namespace's tensordot, vecdot and
// matrix_transpose, and the _core._linalg module behind xpuruntime.linalg (its functions,
// LinAlgError and the named tuples the standard asks for).
#include <nanobind/stl/string.h>

#include <cmath>

#include "bindings.h"
#include "xpuruntime/errors.h"
#include "xpuruntime/linalg.h"

namespace xrt::py {
namespace {

const Tensor& tensor_of(nb::handle obj, const char* what) {
  if (!nb::isinstance<Tensor>(obj))
    throw TypeError(std::string(what) + " must be an xpuruntime Tensor, got " +
                    std::string(nb::type_name(obj.type()).c_str()));
  return nb::cast<const Tensor&>(obj);
}

// An integer: a Python int or anything with __index__ (NumPy integers), but not a bool.
bool is_int(nb::handle obj) { return PyIndex_Check(obj.ptr()) && !PyBool_Check(obj.ptr()); }

int64_t int_of(nb::handle obj, const char* what) {
  if (!is_int(obj))
    throw TypeError(std::string(what) + " must be an int, got " +
                    std::string(nb::type_name(obj.type()).c_str()));
  nb::object index = nb::steal(PyNumber_Index(obj.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow) throw OverflowError(std::string(what) + " does not fit in 64 bits");
  return value;
}

// A real number: an int (as above) or a float; bool and complex are refused.
double real_of(nb::handle obj, const char* what) {
  if (PyFloat_Check(obj.ptr())) return PyFloat_AS_DOUBLE(obj.ptr());
  if (!is_int(obj))
    throw TypeError(std::string(what) + " must be an int or a float, got " +
                    std::string(nb::type_name(obj.type()).c_str()));
  nb::object index = nb::steal(PyNumber_Index(obj.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  double v = PyLong_AsDouble(index.ptr());
  if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

// A sequence of ints (tensordot's axes).
Dims ints_of(nb::handle obj, const char* what) {
  if (!PySequence_Check(obj.ptr()) || PyUnicode_Check(obj.ptr()))
    throw TypeError(std::string(what) + " must be a sequence of ints");
  Dims out;
  for (nb::handle item : nb::borrow<nb::sequence>(obj)) out.push_back(int_of(item, what));
  return out;
}

std::optional<Dims> axes_of(nb::handle axis, const char* op) {
  if (axis.is_none()) return std::nullopt;
  if (is_int(axis)) return Dims{int_of(axis, op)};
  if (PyTuple_Check(axis.ptr())) return ints_of(axis, op);
  throw TypeError(std::string(op) + ": axis must be None, an int or a tuple of ints");
}

linalg::RelativeTolerance rtol_of(nb::handle rtol, const char* op) {
  if (rtol.is_none()) return std::monostate{};
  if (nb::isinstance<Tensor>(rtol)) return nb::cast<Tensor>(rtol);
  std::string what = std::string(op) + ": rtol";
  return real_of(rtol, what.c_str());
}

linalg::MatrixNormOrder matrix_order_of(nb::handle ord) {
  using Kind = linalg::MatrixNormOrder::Kind;
  if (ord.is_none()) return {Kind::Frobenius, 0};
  if (PyUnicode_Check(ord.ptr())) {
    std::string s = nb::cast<std::string>(ord);
    if (s == "fro") return {Kind::Frobenius, 0};
    if (s == "nuc") return {Kind::Nuclear, 0};
    throw ValueError("matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf (got '" + s +
                     "')");
  }
  return {Kind::Number, real_of(ord, "matrix_norm: ord")};
}

// Calls fn(args...) without the GIL, so that other Python threads run while LAPACK works;
// the arguments are converted before, with it.
template <class F, class... Args>
auto unlocked(F fn, Args&&... args) {
  nb::gil_scoped_release release;
  return fn(std::forward<Args>(args)...);
}

// The standard's named tuples, created once and kept for the life of the process.
struct ResultTypes {
  nb::handle eigh, eig, qr, slogdet, svd;
};
ResultTypes result_types;

nb::handle named_tuple(nb::module_& scope, const char* name, nb::tuple fields) {
  nb::object factory = nb::module_::import_("collections").attr("namedtuple");
  nb::object type = factory(name, fields, nb::arg("module") = "xpuruntime.linalg");
  scope.attr(name) = type;
  return type.release();
}

void bind_linalg_functions(nb::module_& l) {
  using namespace linalg;
  l.def(
      "cholesky",
      [](nb::handle x, bool upper) {
        return unlocked(cholesky, tensor_of(x, "cholesky: x"), upper);
      },
      nb::arg("x"), nb::kw_only(), nb::arg("upper") = false);
  l.def(
      "cross",
      [](nb::handle x1, nb::handle x2, nb::handle axis) {
        return cross(tensor_of(x1, "cross: x1"), tensor_of(x2, "cross: x2"),
                     int_of(axis, "cross: axis"));
      },
      nb::arg("x1"), nb::arg("x2"), nb::kw_only(), nb::arg("axis") = -1);
  l.def("det", [](nb::handle x) { return unlocked(det, tensor_of(x, "det: x")); }, nb::arg("x"));
  l.def(
      "diagonal",
      [](nb::handle x, nb::handle offset) {
        return diagonal(tensor_of(x, "diagonal: x"), int_of(offset, "diagonal: offset"));
      },
      nb::arg("x"), nb::kw_only(), nb::arg("offset") = 0);
  l.def(
      "eigh",
      [](nb::handle x) {
        EigResult r = unlocked(eigh, tensor_of(x, "eigh: x"));
        return result_types.eigh(r.eigenvalues, r.eigenvectors);
      },
      nb::arg("x"));
  l.def(
      "eigvalsh", [](nb::handle x) { return unlocked(eigvalsh, tensor_of(x, "eigvalsh: x")); },
      nb::arg("x"));
  l.def(
      "eig",
      [](nb::handle x) {
        EigResult r = unlocked(eig, tensor_of(x, "eig: x"));
        return result_types.eig(r.eigenvalues, r.eigenvectors);
      },
      nb::arg("x"));
  l.def(
      "eigvals", [](nb::handle x) { return unlocked(eigvals, tensor_of(x, "eigvals: x")); },
      nb::arg("x"));
  l.def("inv", [](nb::handle x) { return unlocked(inv, tensor_of(x, "inv: x")); }, nb::arg("x"));
  l.def(
      "matrix_norm",
      [](nb::handle x, bool keepdims, nb::handle ord) {
        return unlocked(matrix_norm, tensor_of(x, "matrix_norm: x"), keepdims,
                        matrix_order_of(ord));
      },
      nb::arg("x"), nb::kw_only(), nb::arg("keepdims") = false, nb::arg("ord").none() = "fro");
  l.def(
      "matrix_power",
      [](nb::handle x, nb::handle n) {
        return unlocked(matrix_power, tensor_of(x, "matrix_power: x"),
                        int_of(n, "matrix_power: n"));
      },
      nb::arg("x"), nb::arg("n"));
  l.def(
      "matrix_rank",
      [](nb::handle x, nb::handle rtol) {
        return unlocked(matrix_rank, tensor_of(x, "matrix_rank: x"), rtol_of(rtol, "matrix_rank"));
      },
      nb::arg("x"), nb::kw_only(), nb::arg("rtol").none() = nb::none());
  l.def(
      "outer",
      [](nb::handle x1, nb::handle x2) {
        return outer(tensor_of(x1, "outer: x1"), tensor_of(x2, "outer: x2"));
      },
      nb::arg("x1"), nb::arg("x2"));
  l.def(
      "pinv",
      [](nb::handle x, nb::handle rtol) {
        return unlocked(pinv, tensor_of(x, "pinv: x"), rtol_of(rtol, "pinv"));
      },
      nb::arg("x"), nb::kw_only(), nb::arg("rtol").none() = nb::none());
  l.def(
      "qr",
      [](nb::handle x, nb::handle mode) {
        std::string m = nb::isinstance<nb::str>(mode) ? nb::cast<std::string>(mode) : "";
        if (m != "reduced" && m != "complete")
          throw ValueError("qr: mode must be 'reduced' or 'complete', got " +
                           std::string(nb::repr(mode).c_str()));
        QrResult r = unlocked(qr, tensor_of(x, "qr: x"), m == "complete");
        return result_types.qr(r.Q, r.R);
      },
      nb::arg("x"), nb::arg("mode") = "reduced");
  l.def(
      "slogdet",
      [](nb::handle x) {
        SlogdetResult r = unlocked(slogdet, tensor_of(x, "slogdet: x"));
        return result_types.slogdet(r.sign, r.logabsdet);
      },
      nb::arg("x"));
  l.def(
      "solve",
      [](nb::handle x1, nb::handle x2) {
        return unlocked(solve, tensor_of(x1, "solve: x1"), tensor_of(x2, "solve: x2"));
      },
      nb::arg("x1"), nb::arg("x2"));
  l.def(
      "svd",
      [](nb::handle x, bool full_matrices) {
        SvdResult r = unlocked(svd, tensor_of(x, "svd: x"), full_matrices);
        return result_types.svd(r.U, r.S, r.Vh);
      },
      nb::arg("x"), nb::arg("full_matrices") = true);
  l.def(
      "svdvals", [](nb::handle x) { return unlocked(svdvals, tensor_of(x, "svdvals: x")); },
      nb::arg("x"));
  l.def(
      "trace",
      [](nb::handle x, nb::handle offset, nb::handle dtype) {
        return trace(tensor_of(x, "trace: x"), int_of(offset, "trace: offset"),
                     optional_dtype_arg(dtype));
      },
      nb::arg("x"), nb::kw_only(), nb::arg("offset") = 0, nb::arg("dtype").none() = nb::none());
  l.def(
      "vector_norm",
      [](nb::handle x, nb::handle axis, bool keepdims, nb::handle ord) {
        return vector_norm(tensor_of(x, "vector_norm: x"), axes_of(axis, "vector_norm"), keepdims,
                           real_of(ord, "vector_norm: ord"));
      },
      nb::arg("x"), nb::kw_only(), nb::arg("axis").none() = nb::none(), nb::arg("keepdims") = false,
      nb::arg("ord") = 2);
}

}  // namespace

void bind_linalg(nb::module_& m) {
  m.def(
      "matrix_transpose",
      [](nb::handle x) { return matrix_transpose(tensor_of(x, "matrix_transpose: x")); },
      nb::arg("x"));
  m.def(
      "tensordot",
      [](nb::handle x1, nb::handle x2, nb::handle axes) {
        const Tensor &a = tensor_of(x1, "tensordot: x1"), &b = tensor_of(x2, "tensordot: x2");
        if (is_int(axes)) return tensordot(a, b, int_of(axes, "tensordot: axes"));
        if (!PySequence_Check(axes.ptr()) || PySequence_Size(axes.ptr()) != 2)
          throw TypeError("tensordot: axes must be an int or a pair of sequences of ints");
        nb::sequence pair = nb::borrow<nb::sequence>(axes);
        return tensordot(a, b, ints_of(pair[0], "tensordot: axes"),
                         ints_of(pair[1], "tensordot: axes"));
      },
      nb::arg("x1"), nb::arg("x2"), nb::arg("axes") = 2);  // Note [NumPy's positional arguments]
  m.def(
      "vecdot",
      [](nb::handle x1, nb::handle x2, nb::handle axis) {
        return vecdot(tensor_of(x1, "vecdot: x1"), tensor_of(x2, "vecdot: x2"),
                      int_of(axis, "vecdot: axis"));
      },
      nb::arg("x1"), nb::arg("x2"), nb::kw_only(), nb::arg("axis") = -1);

  nb::module_ l = m.def_submodule("_linalg", "The Array API linalg extension (xpuruntime.linalg).");
  nb::exception<LinAlgError>(l, "LinAlgError", PyExc_ValueError);
  result_types = {
      named_tuple(l, "EighResult", nb::make_tuple("eigenvalues", "eigenvectors")),
      named_tuple(l, "EigResult", nb::make_tuple("eigenvalues", "eigenvectors")),
      named_tuple(l, "QRResult", nb::make_tuple("Q", "R")),
      named_tuple(l, "SlogdetResult", nb::make_tuple("sign", "logabsdet")),
      named_tuple(l, "SVDResult", nb::make_tuple("U", "S", "Vh")),
  };
  bind_linalg_functions(l);
}

}  // namespace xrt::py
