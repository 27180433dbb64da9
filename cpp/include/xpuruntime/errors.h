// cpp/include/xpuruntime/errors.h: the exceptions of the core. The bindings map each one to
// the Python exception of the same name (TypeError, ..., XpuRuntimeError and its subclasses).
#pragma once
#include <stdexcept>
#include <string>

namespace xrt {

/// Base of the runtime's own failures (Python: xpuruntime.XpuRuntimeError).
struct XpuRuntimeError : std::runtime_error { using std::runtime_error::runtime_error; };
struct CudaError : XpuRuntimeError { using XpuRuntimeError::XpuRuntimeError; };
struct OutOfMemoryError : XpuRuntimeError { using XpuRuntimeError::XpuRuntimeError; };
struct UnsupportedOperationError : XpuRuntimeError { using XpuRuntimeError::XpuRuntimeError; };

// The standard's exceptions, raised by the core where the Array API names them.
struct TypeError : std::runtime_error { using std::runtime_error::runtime_error; };
struct ValueError : std::runtime_error { using std::runtime_error::runtime_error; };
struct IndexError : std::runtime_error { using std::runtime_error::runtime_error; };
struct BufferError : std::runtime_error { using std::runtime_error::runtime_error; };
struct OverflowError : std::runtime_error { using std::runtime_error::runtime_error; };

}  // namespace xrt
