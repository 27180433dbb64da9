// cpp/src/core/memory_stats.cpp: allocator statistics: their resets, PyTorch's flat keys
// and a readable table.
#include "xpuruntime/memory_stats.h"

#include <cinttypes>
#include <cstdio>

namespace xrt {
namespace {

struct StatGroup {
  const char* key;    // PyTorch's name
  const char* label;  // the summary's row
  bool bytes;
  Stat (MemoryStats::*field)[3];
};

constexpr StatGroup kGroups[] = {
    {"allocated_bytes", "Allocated memory", true, &MemoryStats::allocated_bytes},
    {"active_bytes", "Active memory", true, &MemoryStats::active_bytes},
    {"requested_bytes", "Requested memory", true, &MemoryStats::requested_bytes},
    {"reserved_bytes", "Reserved memory", true, &MemoryStats::reserved_bytes},
    {"inactive_split_bytes", "Non-releasable memory", true, &MemoryStats::inactive_split_bytes},
    {"allocation", "Allocations", false, &MemoryStats::allocation},
    {"active", "Active allocs", false, &MemoryStats::active},
    {"segment", "Segments", false, &MemoryStats::segment},
    {"inactive_split", "Non-releasable allocs", false, &MemoryStats::inactive_split},
};

constexpr const char* kPoolNames[3] = {"all", "small_pool", "large_pool"};

std::string format_count(int64_t n) { return std::to_string(n); }

template <class Fn>
void for_each_stat(MemoryStats& stats, Fn fn) {
  for (const StatGroup& g : kGroups)
    for (Stat& s : stats.*g.field) fn(s);
}

}  // namespace

void MemoryStatistics::reset_peak() {
  for_each_stat(stats_, [](Stat& s) { s.peak = s.current; });
}

void MemoryStatistics::reset_accumulated() {
  for_each_stat(stats_, [](Stat& s) { s.allocated = s.freed = 0; });
  stats_.num_alloc_retries = stats_.num_ooms = stats_.num_device_alloc =
      stats_.num_device_free = 0;
}

std::vector<std::pair<std::string, int64_t>> stat_items(const MemoryStats& stats) {
  std::vector<std::pair<std::string, int64_t>> items;
  for (const StatGroup& g : kGroups) {
    for (int pool = 0; pool < 3; ++pool) {
      const Stat& s = (stats.*g.field)[pool];
      std::string prefix = std::string(g.key) + "." + kPoolNames[pool] + ".";
      items.emplace_back(prefix + "current", s.current);
      items.emplace_back(prefix + "peak", s.peak);
      items.emplace_back(prefix + "allocated", s.allocated);
      items.emplace_back(prefix + "freed", s.freed);
    }
  }
  items.emplace_back("num_alloc_retries", stats.num_alloc_retries);
  items.emplace_back("num_ooms", stats.num_ooms);
  items.emplace_back("num_device_alloc", stats.num_device_alloc);
  items.emplace_back("num_device_free", stats.num_device_free);
  return items;
}

std::string format_bytes(int64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes < 0 ? -bytes : bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0) std::snprintf(text, sizeof text, "%s%" PRId64 " B", bytes < 0 ? "-" : "",
                               bytes < 0 ? -bytes : bytes);
  else std::snprintf(text, sizeof text, "%s%.2f %s", bytes < 0 ? "-" : "", value, units[unit]);
  return text;
}

std::string format_summary(const MemoryStats& stats, const std::string& title) {
  constexpr int kWidth = 77;
  std::string rule(kWidth, '-');
  std::string out;
  auto line = [&](const std::string& text) {
    std::string padded = "| " + text;
    if (padded.size() < kWidth - 1) padded.resize(kWidth - 1, ' ');
    out += padded + "|\n";
  };
  out += "|" + std::string(kWidth - 2, '=') + "|\n";
  line("xpuruntime memory summary, " + title);
  out += "|" + rule.substr(2) + "|\n";
  char row[160];
  std::snprintf(row, sizeof row, "%-25s %12s %12s %12s %12s", "", "current", "peak",
                "total alloc", "total freed");
  line(row);
  for (const StatGroup& g : kGroups) {
    out += "|" + rule.substr(2) + "|\n";
    for (int pool = 0; pool < 3; ++pool) {
      const Stat& s = (stats.*g.field)[pool];
      auto f = [&](int64_t v) { return g.bytes ? format_bytes(v) : format_count(v); };
      std::string label = pool == 0 ? g.label : pool == 1 ? "  from small pool" : "  from large pool";
      std::snprintf(row, sizeof row, "%-25s %12s %12s %12s %12s", label.c_str(),
                    f(s.current).c_str(), f(s.peak).c_str(), f(s.allocated).c_str(),
                    f(s.freed).c_str());
      line(row);
    }
  }
  out += "|" + rule.substr(2) + "|\n";
  std::snprintf(row, sizeof row,
                "device allocs %" PRId64 ", device frees %" PRId64 ", OOMs %" PRId64
                ", retries %" PRId64,
                stats.num_device_alloc, stats.num_device_free, stats.num_ooms,
                stats.num_alloc_retries);
  line(row);
  line("limit: " + (stats.limit ? format_bytes(stats.limit) : std::string("none")));
  out += "|" + std::string(kWidth - 2, '=') + "|\n";
  return out;
}

}  // namespace xrt
