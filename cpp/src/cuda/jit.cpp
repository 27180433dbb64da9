// cpp/src/cuda/jit.cpp: NVRTC compilation to cubins, the memory caches (the disk cache's
// files: cuda/kernel_cache_file.cpp) and module loading per device; the launch of what it
// compiles is cuda/launch.cpp.
#include "cuda/jit.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>

#include "cuda/embedded_headers.h"
#include "cuda/kernel_cache_file.h"
#include "cuda/nvrtc.h"
#include "cuda/runtime.h"
#include "xpuruntime/cuda_loader.h"
#include "xpuruntime/errors.h"

namespace xrt::cuda {
namespace {

constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;

struct Counters {
  std::atomic<uint64_t> compiles{0}, memory_hits{0}, disk_hits{0}, disk_writes{0},
      disk_rejects{0};
} counters;

// `what` names the compiled thing in errors ("kernel 'k'", "the module of global 'g'").
std::string compile_program(const KernelSource& source, const std::string& arch,
                            const std::string& name, std::vector<std::string>* lowered,
                            const std::string& what);

std::string kernel_named(const std::string& name) {
  return name.empty() ? "the module" : "kernel '" + name + "'";
}

// ---- keys --------------------------------------------------------------------------------

const EmbeddedHeader* find_header(std::string_view name) {
  for (const EmbeddedHeader& h : embedded_headers())
    if (name == h.name) return &h;
  return nullptr;
}

/// Adds the embedded headers that text #includes, transitively, to `used`. Over-inclusion
/// (an #include inside a comment) only makes the key longer.
void collect_headers(std::string_view text, std::vector<const EmbeddedHeader*>& used) {
  for (size_t at = text.find('#'); at != std::string_view::npos; at = text.find('#', at + 1)) {
    size_t p = text.find_first_not_of(" \t", at + 1);
    if (p == std::string_view::npos || text.compare(p, 7, "include") != 0) continue;
    p = text.find_first_not_of(" \t", p + 7);
    if (p == std::string_view::npos || (text[p] != '"' && text[p] != '<')) continue;
    size_t end = text.find(text[p] == '"' ? '"' : '>', p + 1);
    if (end == std::string_view::npos) continue;
    const EmbeddedHeader* h = find_header(text.substr(p + 1, end - p - 1));
    if (!h || std::find(used.begin(), used.end(), h) != used.end()) continue;
    used.push_back(h);
    collect_headers(h->text, used);
  }
}

bool has_option(const std::vector<std::string>& options, std::string_view flag) {
  for (const std::string& o : options) {
    std::string_view v = o;
    while (!v.empty() && v.front() == '-') v.remove_prefix(1);
    if (v.substr(0, flag.size()) == flag) return true;
  }
  return false;
}

bool names_arch(const std::vector<std::string>& options) {
  return has_option(options, "gpu-architecture") || has_option(options, "arch");
}

/// The defaults, then the source's own options.
std::vector<std::string> full_options(const KernelSource& source, const std::string& arch) {
  std::vector<std::string> options;
  // A source may name its own target (sm_90a, for wgmma and setmaxnreg): it replaces the
  // device's. Loading the cubin on another device then fails with the driver's error.
  if (!names_arch(source.options)) options.push_back("--gpu-architecture=" + arch);
  if (!has_option(source.options, "std")) options.push_back("-std=c++17");
  // Note: NVRTC contracts a * b + c into an FMA by default. The CPU kernels are built with
  // -ffp-contract=off, so elementwise results would differ in the last bit; a family that
  // wants FMAs (matmul-like code) passes --fmad=true.
  if (!has_option(source.options, "fmad")) options.push_back("--fmad=false");
  // Line information for Nsight Compute's source view (no effect on the code itself).
  if (const char* v = std::getenv("XPURUNTIME_NVRTC_LINEINFO"); v && std::strcmp(v, "1") == 0)
    options.push_back("-lineinfo");
  options.insert(options.end(), source.options.begin(), source.options.end());
  return options;
}

/// Everything a cubin depends on, as text: the memory cache's key and the first part of a
/// disk cache file (checked on read, so a file is never used for another key).
std::string cubin_key(const KernelSource& source, const std::string& arch) {
  const NvrtcApi& api = nvrtc();
  std::string key = "xpuruntime cubin 1\nnvrtc " + std::to_string(api.major) + "." +
                    std::to_string(api.minor) + "\n";
  for (const std::string& o : full_options(source, arch)) key += "option " + o + "\n";
  for (const std::string& e : source.name_expressions) key += "name expression " + e + "\n";
  std::vector<const EmbeddedHeader*> used;
  collect_headers(source.source, used);
  std::sort(used.begin(), used.end(),
            [](auto* a, auto* b) { return std::strcmp(a->name, b->name) < 0; });
  for (const EmbeddedHeader* h : used)
    key += "header " + std::string(h->name) + " " +
           kernel_cache_file::hex(kernel_cache_file::fnv1a(h->text)) + "\n";
  key += "source\n";
  key += source.source;
  return key;
}

// ---- the memory caches -------------------------------------------------------------------

/// A function found by (device, name, source text or family key, options).
struct FunctionEntry {
  int device;
  bool keyed;  ///< text is a family's key, not a source
  std::string name, text;
  std::vector<std::string> options;
  CUfunction function;
};

struct Caches {
  std::shared_mutex mutex;
  std::unordered_map<uint64_t, std::vector<FunctionEntry>> functions;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> cubins;  // by key
  std::unordered_map<std::string, std::vector<std::string>> lowered;  // by cubin key
  std::array<std::unordered_map<std::string, CUmodule>, kMaxDevices> modules;  // by key
  std::vector<CUmodule> retired;  // forgotten by clear_jit_memory_cache, still loaded
  std::array<std::string, kMaxDevices> archs;
};

Caches& caches() {
  static Caches* c = new Caches;  // never destroyed: modules may outlive static teardown
  return *c;
}

uint64_t function_hash(int device, bool keyed, std::string_view name, std::string_view text,
                       const std::vector<std::string>& options) {
  std::hash<std::string_view> hash;
  uint64_t h = hash(text) * 31 + hash(name);
  for (const std::string& o : options) h = h * 31 + hash(o);
  return h * 131 + static_cast<uint64_t>(device) * 2 + keyed;
}

CUfunction find_function(uint64_t h, int device, bool keyed, std::string_view name,
                         std::string_view text, const std::vector<std::string>& options) {
  Caches& c = caches();
  std::shared_lock lock(c.mutex);
  auto it = c.functions.find(h);
  if (it == c.functions.end()) return nullptr;
  for (const FunctionEntry& e : it->second)
    if (e.device == device && e.keyed == keyed && e.name == name && e.text == text &&
        e.options == options)
      return e.function;
  return nullptr;
}

void remember_function(uint64_t h, FunctionEntry entry) {
  Caches& c = caches();
  std::unique_lock lock(c.mutex);
  auto& bucket = c.functions[h];
  for (const FunctionEntry& e : bucket)
    if (e.device == entry.device && e.keyed == entry.keyed && e.name == entry.name &&
        e.text == entry.text && e.options == entry.options)
      return;
  bucket.push_back(std::move(entry));
}

// Note: a template kernel is found by its mangled name, which only NVRTC knows. The names are
// kept beside the cubin, in memory and on disk (one line each, under the cubin's key plus a
// suffix), so a cached program is never compiled again just to learn them.
const char* const kLoweredSuffix = "\nlowered names";

void remember_lowered_names(const std::string& key, const std::vector<std::string>& names,
                            const std::string& dir) {
  std::string text;
  for (const std::string& n : names) text += n + "\n";
  if (!dir.empty() && kernel_cache_file::write(dir, key + kLoweredSuffix, text))
    ++counters.disk_writes;
  Caches& c = caches();
  std::unique_lock lock(c.mutex);
  c.lowered[key] = names;
}

std::shared_ptr<const std::string> cubin_for(const std::string& key, const KernelSource& source,
                                             const std::string& arch, const std::string& name,
                                             const std::string& what) {
  Caches& c = caches();
  {
    std::shared_lock lock(c.mutex);
    if (auto it = c.cubins.find(key); it != c.cubins.end()) {
      ++counters.memory_hits;
      return it->second;
    }
  }
  // Note: compiled outside the lock, so threads compiling different kernels do not wait
  // for each other; two threads asking for the same new kernel both compile it, once.
  std::string dir = kernel_cache_dir();
  std::string cubin;
  auto found = dir.empty() ? kernel_cache_file::Read::Missing
                           : kernel_cache_file::read(dir, key, cubin);
  if (found == kernel_cache_file::Read::Hit) {
    ++counters.disk_hits;
  } else {
    if (found == kernel_cache_file::Read::Rejected) ++counters.disk_rejects;
    std::vector<std::string> lowered;
    cubin = compile_program(source, arch, name, &lowered, what);
    if (!source.name_expressions.empty()) remember_lowered_names(key, lowered, dir);
    if (!dir.empty() && kernel_cache_file::write(dir, key, cubin)) ++counters.disk_writes;
  }
  auto shared = std::make_shared<const std::string>(std::move(cubin));
  std::unique_lock lock(c.mutex);
  return c.cubins.emplace(key, std::move(shared)).first->second;
}

CUmodule module_for(int device, const std::string& key, const std::string& cubin,
                    const std::string& what) {
  Caches& c = caches();
  std::unique_lock lock(c.mutex);
  auto& modules = c.modules[device];
  if (auto it = modules.find(key); it != modules.end()) return it->second;
  CUmodule module = nullptr;
  CUresult r = driver().cuModuleLoadData(&module, cubin.data());
  if (r != CUDA_SUCCESS)
    throw CudaError("loading " + what + " (a cubin for " + c.archs[device] +
                    " from NVRTC " + nvrtc_version() + ") on cuda:" + std::to_string(device) +
                    " failed: " + error_text(r) +
                    " (is NVRTC newer than the driver, driver version " +
                    std::to_string(status().driver_version) + "?)");
  modules.emplace(key, module);
  return module;
}

CUfunction load_function(int device, const KernelSource& source, const std::string& name) {
  const std::string& arch = device_arch(device);
  std::string key = cubin_key(source, arch);
  const std::string what = kernel_named(name);
  std::shared_ptr<const std::string> cubin = cubin_for(key, source, arch, name, what);
  activate(device);
  CUmodule module = module_for(device, key, *cubin, what);
  CUfunction function = nullptr;
  CUresult r = driver().cuModuleGetFunction(&function, module, name.c_str());
  if (r == CUDA_ERROR_NOT_FOUND)
    throw CudaError("kernel '" + name + "' is not defined by its source (a kernel needs "
                    "extern \"C\" linkage to be found by name)");
  check(r, "cuModuleGetFunction");
  return function;
}

/// CudaError unless NVRTC can compile for arch ("sm_90", "sm_90a").
void check_arch(const NvrtcApi& api, const std::string& arch) {
  int number = 0;
  if (arch.size() < 4 || arch.compare(0, 3, "sm_") != 0 ||
      std::sscanf(arch.c_str() + 3, "%d", &number) != 1)
    throw CudaError("'" + arch + "' is not a GPU architecture (expected one like 'sm_90')");
  int count = 0;
  nvrtc_check(api.nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<size_t>(std::max(count, 0)));
  nvrtc_check(api.nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  if (std::find(archs.begin(), archs.end(), number) != archs.end()) return;
  std::string supported;
  for (int a : archs) supported += (supported.empty() ? "sm_" : ", sm_") + std::to_string(a);
  throw CudaError("NVRTC " + nvrtc_version() + " cannot compile for " + arch +
                  " (it supports " + supported + "); a newer nvidia-cuda-nvrtc may");
}

}  // namespace

std::string nvrtc_version() {
  const NvrtcApi& api = nvrtc();
  return std::to_string(api.major) + "." + std::to_string(api.minor);
}

std::string kernel_cache_dir() { return kernel_cache_file::default_dir(); }

std::string compile_cubin(const KernelSource& source, const std::string& arch,
                          const std::string& name) {
  return compile_program(source, arch, name, nullptr, kernel_named(name));
}

namespace {

std::string compile_program(const KernelSource& source, const std::string& arch,
                            const std::string& name, std::vector<std::string>* lowered,
                            const std::string& what) {
  const NvrtcApi& api = nvrtc();
  check_arch(api, arch);
  std::vector<const char*> header_texts, header_names;
  for (const EmbeddedHeader& h : embedded_headers()) {
    header_names.push_back(h.name);
    header_texts.push_back(h.text);
  }
  std::vector<std::string> options = full_options(source, arch);
  std::vector<const char*> option_ptrs;
  for (const std::string& o : options) option_ptrs.push_back(o.c_str());
  std::string label = name.empty() ? "kernel" : name;
  std::string program_name = label + ".cu";

  nvrtcProgram program = nullptr;
  nvrtc_check(api.nvrtcCreateProgram(&program, source.source.c_str(), program_name.c_str(),
                                     static_cast<int>(header_names.size()), header_texts.data(),
                                     header_names.data()),
              "nvrtcCreateProgram");
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> guard(
      &program, [](nvrtcProgram* p) { nvrtc().nvrtcDestroyProgram(p); });
  for (const std::string& e : source.name_expressions)
    nvrtc_check(api.nvrtcAddNameExpression(program, e.c_str()), "nvrtcAddNameExpression");
  nvrtcResult result =
      api.nvrtcCompileProgram(program, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  ++counters.compiles;
  if (result != NVRTC_SUCCESS) {
    size_t size = 0;
    std::string log;
    if (api.nvrtcGetProgramLogSize(program, &size) == NVRTC_SUCCESS && size > 1) {
      log.resize(size);
      if (api.nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    const char* reason = api.nvrtcGetErrorString(result);
    throw CudaError("NVRTC " + nvrtc_version() + " could not compile " + what + " for " +
                    arch + " (" + (reason ? reason : "error") + "):\n" + log);
  }
  size_t size = 0;
  nvrtc_check(api.nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
  std::string cubin(size, '\0');
  nvrtc_check(api.nvrtcGetCUBIN(program, cubin.data()), "nvrtcGetCUBIN");
  if (lowered) {
    lowered->clear();
    for (const std::string& e : source.name_expressions) {
      const char* mangled = nullptr;
      nvrtc_check(api.nvrtcGetLoweredName(program, e.c_str(), &mangled), "nvrtcGetLoweredName");
      lowered->push_back(mangled ? mangled : "");
    }
  }
  return cubin;
}

}  // namespace

std::vector<std::string> lowered_names(const KernelSource& source, const std::string& arch) {
  if (source.name_expressions.empty()) return {};
  std::string key = cubin_key(source, arch);
  Caches& c = caches();
  auto find = [&]() -> std::optional<std::vector<std::string>> {
    std::shared_lock lock(c.mutex);
    auto it = c.lowered.find(key);
    if (it == c.lowered.end()) return std::nullopt;
    return it->second;
  };
  if (auto names = find()) return *names;
  std::string dir = kernel_cache_dir(), text;
  if (!dir.empty() &&
      kernel_cache_file::read(dir, key + kLoweredSuffix, text) == kernel_cache_file::Read::Hit) {
    std::vector<std::string> names;
    for (size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
      names.push_back(text.substr(at, end - at));
    if (names.size() == source.name_expressions.size()) {
      ++counters.disk_hits;
      std::unique_lock lock(c.mutex);
      return c.lowered[key] = names;
    }
  }
  // Compiles (or, when the cubin is cached but its names are not, compiles again).
  std::vector<std::string> names;
  std::string cubin = compile_program(source, arch, "", &names, kernel_named(""));
  remember_lowered_names(key, names, dir);
  {
    std::unique_lock lock(c.mutex);
    c.cubins.emplace(key, std::make_shared<const std::string>(std::move(cubin)));
  }
  return names;
}

std::string cached_cubin(const KernelSource& source, const std::string& arch,
                         const std::string& name) {
  return *cubin_for(cubin_key(source, arch), source, arch, name, kernel_named(name));
}

const std::string& device_arch(int device) {
  Caches& c = caches();
  if (device >= 0 && device < kMaxDevices) {
    std::shared_lock lock(c.mutex);
    if (!c.archs[device].empty()) return c.archs[device];
  }
  activate(device);  // checks the index
  CUdevice handle;
  XRT_CU(cuDeviceGet, &handle, device);
  int major = 0, minor = 0;
  XRT_CU(cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle);
  XRT_CU(cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle);
  std::unique_lock lock(c.mutex);
  c.archs[device] = "sm_" + std::to_string(major * 10 + minor);
  return c.archs[device];
}

CUfunction jit_function(int device, const KernelSource& source, const std::string& name) {
  uint64_t h = function_hash(device, false, name, source.source, source.options);
  if (CUfunction f = find_function(h, device, false, name, source.source, source.options)) {
    ++counters.memory_hits;
    return f;
  }
  CUfunction f = load_function(device, source, name);
  remember_function(h, {device, false, name, source.source, source.options, f});
  return f;
}

namespace detail {

CUfunction find_keyed_function(int device, std::string_view key, std::string_view name) {
  static const std::vector<std::string> no_options;
  uint64_t h = function_hash(device, true, name, key, no_options);
  CUfunction f = find_function(h, device, true, name, key, no_options);
  if (f) ++counters.memory_hits;
  return f;
}

CUfunction add_keyed_function(int device, std::string_view key, const KernelSource& source,
                              std::string_view name) {
  std::string kernel(name);
  CUfunction f = load_function(device, source, kernel);
  remember_function(function_hash(device, true, name, key, {}),
                    {device, true, kernel, std::string(key), {}, f});
  return f;
}

}  // namespace detail

Function compile_function(Device device, const KernelSource& source, const std::string& name) {
  if (device.type != DeviceType::CUDA)
    throw ValueError("compile_function: kernels compile for CUDA devices, not " + device.str());
  activate(device.index);
  return Function{jit_function(device.index, source, name), device, name};
}

std::pair<void*, size_t> module_global(Device device, const KernelSource& source,
                                       const std::string& name) {
  if (device.type != DeviceType::CUDA)
    throw ValueError("module_global: modules load on CUDA devices, not " + device.str());
  const std::string& arch = device_arch(device.index);
  std::string key = cubin_key(source, arch);
  const std::string what = "the module of global '" + name + "'";
  std::shared_ptr<const std::string> cubin = cubin_for(key, source, arch, name, what);
  activate(device.index);
  CUmodule module = module_for(device.index, key, *cubin, what);
  CUdeviceptr address = 0;
  size_t bytes = 0;
  CUresult r = driver().cuModuleGetGlobal(&address, &bytes, module, name.c_str());
  if (r == CUDA_ERROR_NOT_FOUND)
    throw CudaError("the module defines no global variable '" + name + "' (a __device__ or "
                    "__constant__ variable of a namespace or a template is found through "
                    "name_expressions)");
  check(r, "cuModuleGetGlobal");
  return {reinterpret_cast<void*>(static_cast<uintptr_t>(address)), bytes};
}

JitCacheInfo jit_cache_info() {
  JitCacheInfo info;
  info.compiles = counters.compiles.load();
  info.memory_hits = counters.memory_hits.load();
  info.disk_hits = counters.disk_hits.load();
  info.disk_writes = counters.disk_writes.load();
  info.disk_rejects = counters.disk_rejects.load();
  return info;
}

void clear_jit_memory_cache() {
  Caches& c = caches();
  std::unique_lock lock(c.mutex);
  c.functions.clear();
  c.cubins.clear();
  c.lowered.clear();
  for (auto& modules : c.modules) {
    for (auto& [key, module] : modules) c.retired.push_back(module);
    modules.clear();
  }
}

}  // namespace xrt::cuda
