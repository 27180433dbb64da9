/* tools/fake_libcuda.c: a stand-in CUDA driver for counting xpuruntime's host instructions
 * on the CUDA path with callgrind, on a machine without a GPU (tools/cuda_host_instructions.sh).
 * Device memory is host memory, copies and memsets are memmove and memset, launches do
 * nothing, graphs are refused, every other call succeeds. Kernels never run, so results are
 * meaningless: it measures our code around the driver, never the driver or the GPU.
 * Built as libcuda.so, not libcuda.so.1: NVRTC opens libcuda.so.1 itself when it finds one,
 * and crashes on this one.
 * With FAKE_CUDA_EVICT set, each launch runs 48 KB of straight-line code first, as the real
 * driver's launch does (Note [Where the host time of a tiny op goes]): it evicts our code
 * from a 32 KB L1 instruction cache, so callgrind's cache simulation counts the lines of our
 * path that a real op fetches again (cuda_host_instructions.sh's CACHE=1). */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
typedef int CUresult;
typedef unsigned long long CUdeviceptr;
static int dummy_ctx, dummy_obj;
static __thread void* current_ctx;
CUresult cuInit(unsigned f) { return 0; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return 0; }
CUresult cuGetErrorName(CUresult e, const char** t) { *t = "CUDA_ERROR_FAKE"; return 0; }
CUresult cuGetErrorString(CUresult e, const char** t) { *t = "fake"; return 0; }
CUresult cuDeviceGetCount(int* c) { *c = 1; return 0; }
CUresult cuDeviceGet(int* d, int o) { *d = o; return 0; }
CUresult cuDeviceGetName(char* n, int len, int d) { strncpy(n, "Fake H100", len); return 0; }
CUresult cuDeviceGetUuid_v2(char* u, int d) { memset(u, 7, 16); return 0; }
CUresult cuDeviceTotalMem_v2(size_t* b, int d) { *b = (size_t)80 << 30; return 0; }
CUresult cuDeviceGetAttribute(int* v, int a, int d) {
  switch (a) {
    case 1: *v = 1024; break;            /* max threads per block */
    case 5: *v = 2147483647; break;      /* grid x */
    case 8: *v = 49152; break;
    case 10: *v = 32; break;
    case 13: *v = 1980000; break;
    case 16: *v = 132; break;
    case 36: *v = 2619000; break;
    case 37: *v = 5120; break;
    case 38: *v = 50331648; break;
    case 39: *v = 2048; break;
    case 75: *v = 9; break;
    case 76: *v = 0; break;
    case 81: *v = 233472; break;
    case 83: *v = 1; break;
    case 97: *v = 232448; break;
    case 115: *v = 1; break;
    default: *v = 0;
  }
  return 0;
}
CUresult cuDeviceCanAccessPeer(int* c, int d, int p) { *c = 0; return 0; }
CUresult cuDevicePrimaryCtxRetain(void** c, int d) { *c = &dummy_ctx; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { return 0; }
CUresult cuCtxSetCurrent(void* c) { current_ctx = c; return 0; }
CUresult cuCtxGetCurrent(void** c) { *c = current_ctx; return 0; }
CUresult cuCtxGetDevice(int* d) { *d = 0; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuCtxGetStreamPriorityRange(int* l, int* g) { *l = 0; *g = -5; return 0; }
CUresult cuMemGetInfo_v2(size_t* f, size_t* t) { *f = (size_t)79 << 30; *t = (size_t)80 << 30; return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t b) {
  void* m = NULL;
  if (posix_memalign(&m, 512, b ? b : 1)) return 2;
  *p = (CUdeviceptr)(uintptr_t)m; return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) { free((void*)(uintptr_t)p); return 0; }
CUresult cuMemAllocAsync(CUdeviceptr* p, size_t b, void* s) { return cuMemAlloc_v2(p, b); }
CUresult cuMemFreeAsync(CUdeviceptr p, void* s) { return cuMemFree_v2(p); }
CUresult cuDeviceGetDefaultMemPool(void** p, int d) { *p = &dummy_obj; return 0; }
CUresult cuMemPoolSetAttribute(void* p, int a, void* v) { return 0; }
CUresult cuMemPoolGetAttribute(void* p, int a, void* v) { *(unsigned long long*)v = 0; return 0; }
CUresult cuMemPoolTrimTo(void* p, size_t k) { return 0; }
CUresult cuMemHostAlloc(void** p, size_t b, unsigned f) { return posix_memalign(p, 512, b ? b : 1) ? 2 : 0; }
CUresult cuMemFreeHost(void* p) { free(p); return 0; }
CUresult cuMemHostRegister_v2(void* p, size_t b, unsigned f) { return 0; }
CUresult cuMemHostUnregister(void* p) { return 0; }
CUresult cuPointerGetAttribute(void* d, int a, CUdeviceptr p) { memset(d, 0, 8); return 1; }
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t b, void* st) { memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, b); return 0; }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* s, size_t b, void* st) { memmove((void*)(uintptr_t)d, s, b); return 0; }
CUresult cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, size_t b, void* st) { memmove(d, (void*)(uintptr_t)s, b); return 0; }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t b, void* st) { memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, b); return 0; }
CUresult cuMemcpyPeerAsync(CUdeviceptr d, void* dc, CUdeviceptr s, void* sc, size_t b, void* st) { memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, b); return 0; }
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void* s) { memset((void*)(uintptr_t)d, v, n); return 0; }
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void* s) { unsigned* p = (unsigned*)(uintptr_t)d; for (size_t i = 0; i < n; ++i) p[i] = v; return 0; }
CUresult cuStreamCreateWithPriority(void** s, unsigned f, int p) { *s = malloc(64); return 0; }
CUresult cuStreamDestroy_v2(void* s) { free(s); return 0; }
CUresult cuStreamSynchronize(void* s) { return 0; }
CUresult cuStreamQuery(void* s) { return 0; }
CUresult cuStreamWaitEvent(void* s, void* e, unsigned f) { return 0; }
CUresult cuStreamGetPriority(void* s, int* p) { *p = 0; return 0; }
CUresult cuStreamGetCtx(void* s, void** c) { *c = &dummy_ctx; return 0; }
CUresult cuStreamBeginCapture_v2(void* s, int m) { return 801; }
CUresult cuStreamEndCapture(void* s, void** g) { return 801; }
CUresult cuStreamIsCapturing(void* s, int* st) { *st = 0; return 0; }
CUresult cuThreadExchangeStreamCaptureMode(int* m) { return 0; }
CUresult cuEventCreate(void** e, unsigned f) { *e = malloc(16); return 0; }
CUresult cuEventDestroy_v2(void* e) { free(e); return 0; }
CUresult cuEventRecord(void* e, void* s) { return 0; }
CUresult cuEventQuery(void* e) { return 0; }
CUresult cuEventSynchronize(void* e) { return 0; }
CUresult cuEventElapsedTime_v2(float* ms, void* a, void* b) { *ms = 0.001f; return 0; }
CUresult cuGraphInstantiateWithFlags(void** e, void* g, unsigned long long f) { return 801; }
CUresult cuGraphLaunch(void* e, void* s) { return 801; }
CUresult cuGraphUpload(void* e, void* s) { return 801; }
CUresult cuGraphExecDestroy(void* e) { return 0; }
CUresult cuGraphDestroy(void* g) { return 0; }
CUresult cuGraphGetNodes(void* g, void** n, size_t* c) { *c = 0; return 0; }
CUresult cuModuleLoadData(void** m, const void* image) { *m = malloc(16); return 0; }
CUresult cuModuleUnload(void* m) { free(m); return 0; }
CUresult cuModuleGetFunction(void** f, void* m, const char* name) { *f = malloc(16); return 0; }
CUresult cuModuleGetGlobal_v2(CUdeviceptr* p, size_t* b, void* m, const char* n) {
  if (b) *b = 256; if (p) { void* x = calloc(1, 256); *p = (CUdeviceptr)(uintptr_t)x; } return 0; }
CUresult cuFuncSetAttribute(void* f, int a, int v) { return 0; }
CUresult cuFuncGetAttribute(int* v, int a, void* f) { *v = a == 0 ? 1024 : 32; return 0; }
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* b, void* f, int bs, size_t d) { *b = 8; return 0; }
static void evict_our_code(void) {
  static int evict = -1;
  if (evict < 0) evict = getenv("FAKE_CUDA_EVICT") != NULL;
  /* 6,144 eight-byte nops: 48 KB of code, 6,144 instructions. */
  if (evict) __asm__ volatile(".rept 6144\n.byte 0x0f,0x1f,0x84,0,0,0,0,0\n.endr");
}
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned sh, void* s, void** p, void** e) {
  evict_our_code();
  return 0;
}
typedef struct { unsigned g[3], b[3], sh; void* s; void* attrs; unsigned n; } Cfg;
CUresult cuLaunchKernelEx(const Cfg* c, void* f, void** p, void** e) {
  evict_our_code();
  return 0;
}
