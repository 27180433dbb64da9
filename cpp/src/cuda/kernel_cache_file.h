// cpp/src/cuda/kernel_cache_file.h: the on-disk format of the kernel cache: one file per
// cubin, holding its full key and a checksum, written atomically.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xrt::cuda::kernel_cache_file {

/// FNV-1a: names cache files and checksums their contents (a mismatch only recompiles).
uint64_t fnv1a(std::string_view data, uint64_t h = 14695981039346656037ull);
/// 16 lowercase hex digits.
std::string hex(uint64_t value);

/// The folder of the disk cache: XPURUNTIME_CACHE_DIR/kernels, else
/// $XDG_CACHE_HOME/xpuruntime/kernels, else ~/.cache/xpuruntime/kernels; "" when
/// XPURUNTIME_DISABLE_KERNEL_CACHE is set (not "0") or no home folder is known.
std::string default_dir();

/// What reading found.
enum class Read { Hit, Missing, Rejected };

/// The cubin stored for key in dir. Rejected: a file that fails any check (truncated,
/// corrupt, another key under the same hash, not an ELF image); it is recompiled, never
/// trusted.
Read read(const std::string& dir, const std::string& key, std::string& cubin);

/// Stores a cubin under a unique temporary name, then renames it over the final name
/// (atomic on POSIX), so processes sharing the folder see the old file, the new one, or
/// none. False on failure (a read-only or full disk), which only costs a recompile later.
bool write(const std::string& dir, const std::string& key, const std::string& cubin);

}  // namespace xrt::cuda::kernel_cache_file
