// cpp/src/cuda/library_table.h: resolving the function table of a dlopened CUDA library
// (cuBLAS, cuBLASLt, cuFFT, cuSOLVER, NCCL), with errors that tell a user what to install.
#pragma once
#include <dlfcn.h>

#include <string>

#include "xpuruntime/cuda_loader.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {

/// An Api of function pointers filled from `library`: fill(api, resolve) calls
/// resolve(symbol) for each required entry, resolve(symbol, false) for an optional one
/// (null when absent). CudaError naming the pip `package` when the library cannot be
/// loaded (and the xpuruntime `extra` that brings it), or listing the required symbols it
/// lacks (too old a library).
template <class Api, class Fill>
Api load_library_table(Library library, const char* what, const char* package, Fill fill,
                       const char* extra = "cuda") {
  void* handle = library_handle(library);
  const LibraryStatus st = library_status(library);
  if (!handle)
    throw CudaError(std::string(what) + " is not available: " +
                    (st.reason.empty() ? std::string("the library was not found") : st.reason) +
                    ". Install it with `pip install " + package +
                    "` (or `pip install xpuruntime[" + extra + "]`), or point CUDA_HOME at a "
                    "CUDA toolkit");
  Api api;
  std::string missing;
  fill(api, [&](const char* symbol, bool required = true) {
    void* p = dlsym(handle, symbol);
    if (!p && required) missing += std::string(missing.empty() ? "" : ", ") + symbol;
    return p;
  });
  if (!missing.empty())
    throw CudaError(std::string(what) + " at " + st.path + " is too old for xpuruntime: it lacks " +
                    missing + " (CUDA 12 or newer is needed; `pip install -U " + package + "`)");
  return api;
}

}  // namespace xrt::cuda
