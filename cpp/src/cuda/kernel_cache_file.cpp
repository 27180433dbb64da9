// cpp/src/cuda/kernel_cache_file.cpp: reading and writing the kernel cache's files.
#include "cuda/kernel_cache_file.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace xrt::cuda::kernel_cache_file {
namespace {

// A cache file: this header, the key, the cubin. The checksum covers key and cubin.
struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t reserved;
  uint64_t key_size;
  uint64_t cubin_size;
  uint64_t checksum;
};
constexpr char kMagic[8] = {'X', 'R', 'T', 'C', 'U', 'B', 'I', 'N'};
constexpr uint32_t kFormatVersion = 1;

std::string path_of(const std::string& dir, const std::string& key) {
  return dir + "/" + hex(fnv1a(key)) + ".cubin";
}

}  // namespace

uint64_t fnv1a(std::string_view data, uint64_t h) {
  for (unsigned char c : data) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::string default_dir() {
  const char* off = std::getenv("XPURUNTIME_DISABLE_KERNEL_CACHE");
  if (off && *off && std::strcmp(off, "0") != 0) return "";
  if (const char* dir = std::getenv("XPURUNTIME_CACHE_DIR"); dir && *dir)
    return std::string(dir) + "/kernels";
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir && *dir)
    return std::string(dir) + "/xpuruntime/kernels";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/xpuruntime/kernels";
  return "";
}

Read read(const std::string& dir, const std::string& key, std::string& cubin) {
  std::ifstream in(path_of(dir, key), std::ios::binary);
  if (!in) return Read::Missing;
  in.seekg(0, std::ios::end);
  auto size = static_cast<uint64_t>(std::max<std::streamoff>(in.tellg(), 0));
  in.seekg(0);
  FileHeader h;
  if (size < sizeof h || !in.read(reinterpret_cast<char*>(&h), sizeof h)) return Read::Rejected;
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.version != kFormatVersion ||
      h.key_size != key.size() || h.cubin_size > size ||
      sizeof h + h.key_size + h.cubin_size != size)
    return Read::Rejected;
  std::string stored_key(h.key_size, '\0'), stored(h.cubin_size, '\0');
  if (!in.read(stored_key.data(), static_cast<std::streamsize>(stored_key.size())) ||
      !in.read(stored.data(), static_cast<std::streamsize>(stored.size())))
    return Read::Rejected;
  if (stored_key != key || fnv1a(stored, fnv1a(stored_key)) != h.checksum ||
      stored.compare(0, 4, "\x7f" "ELF") != 0)
    return Read::Rejected;
  cubin = std::move(stored);
  return Read::Hit;
}

bool write(const std::string& dir, const std::string& key, const std::string& cubin) {
  static std::atomic<uint64_t> serial{0};
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string path = path_of(dir, key);
  std::string temporary = path + ".tmp." + std::to_string(getpid()) + "." +
                          std::to_string(serial.fetch_add(1));
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kFormatVersion;
  h.key_size = key.size();
  h.cubin_size = cubin.size();
  h.checksum = fnv1a(cubin, fnv1a(key));
  bool ok;
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    out.close();
    ok = !out.fail();
  }
  if (ok && std::rename(temporary.c_str(), path.c_str()) == 0) return true;
  std::remove(temporary.c_str());
  return false;
}

}  // namespace xrt::cuda::kernel_cache_file
