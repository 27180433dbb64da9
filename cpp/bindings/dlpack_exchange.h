// cpp/bindings/dlpack_exchange.h: DLPack's C exchange API, for bind_dlpack.cpp.
#pragma once
#include "bindings.h"
#include "xpuruntime/dlpack.h"

namespace xrt::py {

/// The table the Tensor type exports as __dlpack_c_exchange_api__.
const dlpack::ExchangeAPI& tensor_exchange_api();
/// The exchange API of obj's type (null when it has none or an incompatible major version).
const dlpack::ExchangeAPI* exchange_api_of(nb::handle obj);
/// obj imported through its type's table; our current stream waits for the producer's.
Tensor import_through_exchange(const dlpack::ExchangeAPI& api, nb::handle obj);
/// Nanoseconds per call of that import's pieces, timed in C++ (benchmarks).
nb::dict time_exchange_import(nb::handle obj, int count);

}  // namespace xrt::py
