// cpp/src/cuda/jit_interim.cpp: TEMPORARY stand-in for the jit family's cuda/jit.cpp, so that
// the elementwise branch builds and runs before that lands. Delete it at the merge (the jit
// family implements the same header with the embedded headers and the disk cache).
// NVRTC from the probed library, headers read from the source tree, a memory cache only.
#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

#include "cuda/jit.h"
#include "cuda/runtime.h"
#include "xpuruntime/cuda_loader.h"
#include "xpuruntime/errors.h"

#ifndef XRT_KERNELS_DIR
#define XRT_KERNELS_DIR ""
#endif

namespace xrt::cuda {
namespace {

using Program = void*;
struct Nvrtc {
  int (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*);
  int (*compile)(Program, int, const char* const*);
  int (*log_size)(Program, size_t*);
  int (*log)(Program, char*);
  int (*cubin_size)(Program, size_t*);
  int (*cubin)(Program, char*);
  int (*destroy)(Program*);
};

const Nvrtc& nvrtc() {
  static const Nvrtc api = [] {
    void* h = library_handle(Library::Nvrtc);
    if (!h) throw CudaError("NVRTC is not available: " + status().nvrtc.reason);
    Nvrtc a;
    a.create = reinterpret_cast<decltype(a.create)>(dlsym(h, "nvrtcCreateProgram"));
    a.compile = reinterpret_cast<decltype(a.compile)>(dlsym(h, "nvrtcCompileProgram"));
    a.log_size = reinterpret_cast<decltype(a.log_size)>(dlsym(h, "nvrtcGetProgramLogSize"));
    a.log = reinterpret_cast<decltype(a.log)>(dlsym(h, "nvrtcGetProgramLog"));
    a.cubin_size = reinterpret_cast<decltype(a.cubin_size)>(dlsym(h, "nvrtcGetCUBINSize"));
    a.cubin = reinterpret_cast<decltype(a.cubin)>(dlsym(h, "nvrtcGetCUBIN"));
    a.destroy = reinterpret_cast<decltype(a.destroy)>(dlsym(h, "nvrtcDestroyProgram"));
    return a;
  }();
  return api;
}

struct Headers {
  std::vector<std::string> names, bodies;
};

const Headers& headers() {
  static const Headers h = [] {
    Headers out;
    std::filesystem::path dir = std::string(XRT_KERNELS_DIR) + "/xrt";
    if (std::filesystem::is_directory(dir))
      for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        std::ifstream in(entry.path());
        std::stringstream text;
        text << in.rdbuf();
        out.names.push_back("xrt/" + entry.path().filename().string());
        out.bodies.push_back(text.str());
      }
    return out;
  }();
  return h;
}

std::mutex cache_mutex;
std::map<std::tuple<int, std::string, std::string>, CUfunction> functions;

}  // namespace

std::string compile_cubin(const KernelSource& source, const std::string& arch) {
  const Nvrtc& api = nvrtc();
  const Headers& h = headers();
  std::vector<const char*> names, bodies;
  for (size_t i = 0; i < h.names.size(); ++i) {
    names.push_back(h.names[i].c_str());
    bodies.push_back(h.bodies[i].c_str());
  }
  Program program = nullptr;
  if (api.create(&program, source.source.c_str(), "kernel.cu", static_cast<int>(names.size()),
                 bodies.data(), names.data()) != 0)
    throw CudaError("nvrtcCreateProgram failed");
  std::vector<std::string> options = {"-arch=" + arch, "-std=c++17"};
  bool fmad = false;
  for (const std::string& o : source.options) {
    options.push_back(o);
    fmad = fmad || o.rfind("--fmad", 0) == 0 || o.rfind("-fmad", 0) == 0;
  }
  if (!fmad) options.push_back("--fmad=false");
  std::vector<const char*> option_ptrs;
  for (const std::string& o : options) option_ptrs.push_back(o.c_str());
  int result = api.compile(program, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  size_t size = 0;
  api.log_size(program, &size);
  std::string log(size, '\0');
  api.log(program, log.data());
  if (result != 0) {
    api.destroy(&program);
    throw CudaError("NVRTC could not compile a kernel:\n" + log);
  }
  api.cubin_size(program, &size);
  std::string cubin(size, '\0');
  api.cubin(program, cubin.data());
  api.destroy(&program);
  return cubin;
}

CUfunction jit_function(int device, const KernelSource& source, const std::string& name) {
  std::string options;
  for (const std::string& o : source.options) options += o + " ";
  auto key = std::make_tuple(device, source.source + options, name);
  {
    std::lock_guard lock(cache_mutex);
    if (auto it = functions.find(key); it != functions.end()) return it->second;
  }
  int major = 0, minor = 0;
  CUdevice handle;
  XRT_CU(cuDeviceGet, &handle, device);
  XRT_CU(cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle);
  XRT_CU(cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle);
  std::string cubin =
      compile_cubin(source, "sm_" + std::to_string(major) + std::to_string(minor));
  activate(device);
  CUmodule module;
  XRT_CU(cuModuleLoadData, &module, cubin.data());
  CUfunction fn;
  XRT_CU(cuModuleGetFunction, &fn, module, name.c_str());
  std::lock_guard lock(cache_mutex);
  return functions.emplace(key, fn).first->second;
}

void launch(CUfunction fn, Dim3 grid, Dim3 block, size_t shared_bytes, CUstream stream,
            void** args) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;
  XRT_CU(cuLaunchKernel, fn, grid.x, grid.y, grid.z, block.x, block.y, block.z,
         static_cast<unsigned>(shared_bytes), stream, args, nullptr);
}

}  // namespace xrt::cuda
