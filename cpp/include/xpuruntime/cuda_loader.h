// cpp/include/xpuruntime/cuda_loader.h: finding the CUDA driver, NVRTC, cuBLAS(Lt), cuFFT,
// cuSOLVER and NCCL at run time (dlopen), so one build serves machines with and without a GPU.
#pragma once
#include <functional>
#include <string>

namespace xrt::cuda {

struct LibraryStatus {
  bool found = false;
  std::string path;       ///< what was loaded, when found
  std::string found_via;  ///< how: "site-packages", "conda", "CUDA_PATH", "system search", ...
  std::string reason;     ///< why not, otherwise
};

struct Status {
  bool available = false;  ///< driver loaded, cuInit succeeded, at least one device
  int device_count = 0;
  int driver_version = 0;  ///< e.g. 13000
  std::string reason;      ///< why CUDA is unavailable ("" when available)
  LibraryStatus driver, nvrtc, cublas, cublaslt;
};

/// Says where a library is (found, path, found_via) or why not (reason), given its short name
/// ("cuda", "nvrtc", "cublas", "cublasLt", "cufft", "cusolver", "nccl"); not found with no reason
/// means it could not look. It is called with no lock of the loader held.
using LibraryFinder = std::function<LibraryStatus(const char* name)>;
/// The finder asked before the system's own search (the Python layer installs one over
/// cuda-pathfinder at import); nullptr: the system's search only.
void set_library_finder(LibraryFinder finder);
/// Probes once and caches the answer.
const Status& status();

/// The dlopen handles of the probed libraries (nullptr when not found). The driver's
/// function table (cuda/driver.h) and the NVRTC and cuBLAS tables resolve their symbols here.
/// cuFFT, cuSOLVER and NCCL are large and rarely needed: they are opened on first use, not
/// by the probe, and library_status says what that found.
enum class Library { Driver, Nvrtc, Cublas, CublasLt, Cufft, Cusolver, Nccl, Cudnn };
void* library_handle(Library library);
LibraryStatus library_status(Library library);

/// cuBLAS's version (major * 10000 + minor * 100 + patch); needs no GPU. CudaError saying
/// how to install cuBLAS when it cannot be loaded.
int cublas_version();

}  // namespace xrt::cuda
