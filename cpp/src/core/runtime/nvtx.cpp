// cpp/src/core/runtime/nvtx.cpp: the application side of NVTX v3's injection interface,
// enough for domain ranges and marks.
//
// Note [NVTX injection]: NVTX v3 is header-only: an application keeps a table of function
// pointers, and a tool (Nsight Systems, or any library named by NVTX_INJECTION64_PATH)
// fills it. On first use the application dlopens the tool and calls its
// `int InitializeInjectionNvtx2(GetExportTable)`; the tool asks for the CALLBACKS export
// table (id 1) and, through its GetModuleFunctionTable, receives per module an array of
// pointers to our function-pointer slots, indexed by callback id, and writes its
// implementations into them. We declare only what we call (module CORE2: DomainMarkEx = 1,
// DomainRangePushEx = 4, DomainRangePop = 5, DomainCreateA = 12) and keep inert slots for
// the rest, so a tool that fills every slot writes into our memory, never past it. The
// event attributes struct is NVTX's version-3 layout (48 bytes). We never load CUPTI:
// a process has one CUPTI subscriber, and torch.profiler needs it.
#include "core/runtime/nvtx.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>

namespace xrt::nvtx {
namespace {

struct EventAttributes {  // nvtxEventAttributes_t, version 3
  uint16_t version = 3;
  uint16_t size = sizeof(EventAttributes);
  uint32_t category = 0;
  int32_t color_type = 1;  // ARGB
  uint32_t color = 0xff76b900;
  int32_t payload_type = 0;
  int32_t reserved0 = 0;
  uint64_t payload = 0;
  int32_t message_type = 1;  // ASCII
  const char* message = nullptr;
};
static_assert(sizeof(EventAttributes) == 48);

using Domain = void*;
using FunctionPointer = void (*)();
using MarkFn = void (*)(Domain, const EventAttributes*);
using PushFn = int (*)(Domain, const EventAttributes*);
using PopFn = int (*)(Domain);
using CreateFn = Domain (*)(const char*);

constexpr unsigned kModuleCore = 1, kModuleCuda = 2, kModuleOpenCL = 3, kModuleCudaRt = 4,
                   kModuleCore2 = 5, kModuleSync = 6;
constexpr unsigned kCore2MarkEx = 1, kCore2PushEx = 4, kCore2Pop = 5, kCore2CreateA = 12;
// Slot counts per module (callback ids run 1..size-1), generous for later NVTX versions.
constexpr unsigned kSlots = 32;

struct Tables {
  FunctionPointer slots[7][kSlots] = {};     // what the tool writes, by module
  FunctionPointer* pointers[7][kSlots] = {};  // what the tool is given
  Tables() {
    for (int m = 0; m < 7; ++m)
      for (unsigned i = 0; i < kSlots; ++i) pointers[m][i] = &slots[m][i];
  }
};
Tables tables;

using FunctionTable = FunctionPointer**;
int get_module_function_table(unsigned module, FunctionTable* out, unsigned* size) {
  if (module < kModuleCore || module > kModuleSync || !out || !size) return 0;
  *out = tables.pointers[module];
  // The sizes NVTX itself reports (the enum's SIZE member) for the modules we know.
  static const unsigned sizes[7] = {0, 16, 9, 15, 7, 16, 7};
  *size = sizes[module];
  return 1;
}

struct CallbacksTable {
  size_t struct_size;
  int (*get_module_function_table)(unsigned, FunctionTable*, unsigned*);
};
struct VersionTable {
  size_t struct_size;
  uint32_t version;
  uint32_t reserved0;
  void (*set_injection_version)(uint32_t);
};
void set_injection_version(uint32_t) {}
const CallbacksTable callbacks{sizeof(CallbacksTable), &get_module_function_table};
const VersionTable version_info{sizeof(VersionTable), 3, 0, &set_injection_version};

const void* get_export_table(uint32_t id) {
  if (id == 1) return &callbacks;
  if (id == 3) return &version_info;
  return nullptr;
}

using InitFn = int (*)(const void* (*)(uint32_t));

std::once_flag once;
bool attached = false;
Domain domain = nullptr;
PushFn push_fn = nullptr;
PopFn pop_fn = nullptr;
MarkFn mark_fn = nullptr;

void load() {
  InitFn init = nullptr;
  // A tool may be in the process already (preloaded), else named by the environment.
  init = reinterpret_cast<InitFn>(dlsym(RTLD_DEFAULT, "InitializeInjectionNvtx2Preinject"));
  if (!init) {
    const char* path = std::getenv("NVTX_INJECTION64_PATH");
    if (!path || !*path) return;
    void* library = dlopen(path, RTLD_LAZY);
    if (!library) return;
    init = reinterpret_cast<InitFn>(dlsym(library, "InitializeInjectionNvtx2"));
  }
  if (!init || !init(&get_export_table)) return;
  auto create = reinterpret_cast<CreateFn>(tables.slots[kModuleCore2][kCore2CreateA]);
  push_fn = reinterpret_cast<PushFn>(tables.slots[kModuleCore2][kCore2PushEx]);
  pop_fn = reinterpret_cast<PopFn>(tables.slots[kModuleCore2][kCore2Pop]);
  mark_fn = reinterpret_cast<MarkFn>(tables.slots[kModuleCore2][kCore2MarkEx]);
  if (create) domain = create("xpuruntime");
  attached = push_fn && pop_fn;
}

}  // namespace

bool attach() {
  std::call_once(once, load);
  return attached;
}

void push(const char* message) {
  if (!attach()) return;
  EventAttributes a;
  a.message = message;
  push_fn(domain, &a);
}

void pop() {
  if (attach()) pop_fn(domain);
}

void mark(const char* message) {
  if (!attach() || !mark_fn) return;
  EventAttributes a;
  a.message = message;
  mark_fn(domain, &a);
}

}  // namespace xrt::nvtx
