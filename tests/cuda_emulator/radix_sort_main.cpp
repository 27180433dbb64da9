// tests/cuda_emulator/radix_sort_main.cpp: the onesweep radix sort of
// cpp/kernels/xrt/radix_sort.cuh run by the host emulator, launched in the order
// cuda/sort_kernels.cpp launches it (Note [Onesweep launches]), on small blocks and tiles
// (EMU_THREADS, EMU_IPT) so that small rows span many tiles and upsweep chunks.
//
//   radix_sort_main DTYPE ARG DESCENDING ROWS N CHUNK < rows.bin > result.bin
//
// reads ROWS * N elements, writes the sorted values (ARG 0) or int64 indices (ARG 1).
//
//   radix_sort_main pairs WIDE PAYLOAD BITS ROWS N CHUNK < keys.bin payload.bin > sorted.bin
//
// sorts pre-encoded keys (uint32, or uint64 when WIDE) with a uint32 payload (PAYLOAD 1)
// or alone as radix_sort_pairs does (the caller's input buffers reused in between), and
// writes the sorted keys, then the sorted payload.
//
//   radix_sort_main encoded DTYPE POSITIONS ROWS N CHUNK < rows.bin > sorted.bin
//
// radix_sort_encoded (int32 and float64): writes the sorted keys, then (POSITIONS 1) the
// uint32 positions they came from.
#include "emulator.h"
#include "xrt/radix_sort.cuh"

#ifndef EMU_THREADS
#define EMU_THREADS 64
#endif
#ifndef EMU_IPT
#define EMU_IPT 3
#endif

namespace {

constexpr int kThreads = EMU_THREADS;
constexpr int kItems = EMU_IPT;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <class T, bool ARG> int run(int64_t rows, int64_t n, int64_t chunk, bool descending) {
  typedef typename xrt::sort::Key<T>::S S;
  constexpr int P = sizeof(S);
  constexpr bool kSpecials = !ARG && xrt::sort::Key<T>::kFloat;
  const int64_t total = rows * n, tiles = ceil_div(n, int64_t(kThreads) * kItems);
  if (chunk % (int64_t(kThreads) * xrt::radix::kUnroll) != 0) return 2;
  const int64_t chunks = ceil_div(n, chunk);
  std::vector<T> in(total);
  if (std::fread(in.data(), sizeof(T), total, stdin) != size_t(total)) return 3;
  std::vector<uint32_t> hist(rows * P * 256), row_specials(rows * 4),
      chunk_specials(rows * chunks * 2, 0xdeadbeefu),
      desc(P * rows * tiles * 256), masks(rows, 0xdeadbeefu);
  std::vector<S> keys0(total, S(0x5a)), keys1(total, S(0xa5));
  std::vector<uint32_t> index0(total, 7u), index1(total, 9u);
  // Garbage where nothing was written shows up in the comparison.
  std::vector<unsigned char> out(total * (ARG ? 8 : sizeof(T)), 0xab);
  T* values = reinterpret_cast<T*>(out.data());
  const dim3 chunk_grid{unsigned(rows * chunks)}, block{kThreads};
  unsigned seed = 1;
  emu::launch(chunk_grid, block, [&] {
    xrt::radix::upsweep<T, kThreads, kSpecials>(in.data(), hist.data(), row_specials.data(),
                                                chunk_specials.data(), n, chunk, chunks,
                                                descending);
  }, 3, seed++);
  emu::launch({unsigned(rows)}, {256}, [&] { xrt::radix::plan<P>(hist.data(), masks.data(), n); },
              3, seed++);
  for (int pass = 0; pass < P; ++pass) {
    emu::launch({unsigned(rows * tiles)}, block, [&] {
      xrt::radix::pass<T, ARG ? xrt::radix::kPosition : xrt::radix::kNone, kThreads, kItems>(
          in.data(), out.data(), nullptr, nullptr, keys0.data(), keys1.data(), index0.data(), index1.data(),
          hist.data(), masks.data(), desc.data() + pass * rows * tiles * 256, n,
          tiles, pass, descending);
    }, 3, seed++);
  }
  if constexpr (kSpecials) {
    emu::launch(chunk_grid, block, [&] {
      xrt::radix::fixup<T, kThreads>(in.data(), values, row_specials.data(),
                                     chunk_specials.data(), n, chunk, chunks, descending);
    }, 3, seed++);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

/// radix_sort_pairs' launches (sort_kernels.cpp): the first pass reads keys[0], the last
/// writes keys[1], the passes between use a buffer of their own and keys[0].
template <class K, bool PAYLOAD, int P> int run_pairs(int64_t rows, int64_t n, int64_t chunk) {
  const int64_t total = rows * n, tiles = ceil_div(n, int64_t(kThreads) * kItems);
  if (chunk % (int64_t(kThreads) * xrt::radix::kUnroll) != 0) return 2;
  const int64_t chunks = ceil_div(n, chunk);
  std::vector<K> keys_in(total), keys_out(total, K(0x3c)), spare(total, K(0x5a));
  std::vector<uint32_t> index_in(total), index_out(total, 0xabu), spare_index(total, 7u);
  if (std::fread(keys_in.data(), sizeof(K), total, stdin) != size_t(total)) return 3;
  if (PAYLOAD && std::fread(index_in.data(), 4, total, stdin) != size_t(total)) return 3;
  std::vector<uint32_t> hist(rows * P * 256), desc(P * rows * tiles * 256),
      masks(rows, 0xdeadbeefu);
  constexpr int kPayload = PAYLOAD ? xrt::radix::kCarried : xrt::radix::kNone;
  const dim3 block{kThreads};
  unsigned seed = 1;
  emu::launch({unsigned(rows * chunks)}, block, [&] {
    xrt::radix::upsweep<K, kThreads, false, P>(keys_in.data(), hist.data(), nullptr, nullptr, n,
                                               chunk, chunks, false);
  }, 3, seed++);
  emu::launch({unsigned(rows)}, {256}, [&] { xrt::radix::plan<P>(hist.data(), masks.data(), n); },
              3, seed++);
  for (int pass = 0; pass < P; ++pass) {
    emu::launch({unsigned(rows * tiles)}, block, [&] {
      xrt::radix::pass<K, kPayload, kThreads, kItems, P>(
          keys_in.data(), keys_out.data(), PAYLOAD ? index_in.data() : nullptr,
          PAYLOAD ? index_out.data() : nullptr, spare.data(), keys_in.data(),
          PAYLOAD ? spare_index.data() : nullptr, PAYLOAD ? index_in.data() : nullptr,
          hist.data(), masks.data(), desc.data() + pass * rows * tiles * 256, n,
          tiles, pass, false);
    }, 3, seed++);
  }
  std::fwrite(keys_out.data(), sizeof(K), total, stdout);
  if (PAYLOAD) std::fwrite(index_out.data(), 4, total, stdout);
  return 0;
}

template <class K, bool PAYLOAD>
int run_pairs(int passes, int64_t rows, int64_t n, int64_t chunk) {
  // The pass counts the tests use (each one is a separate instantiation to compile).
  switch (passes) {
    case 1: return run_pairs<K, PAYLOAD, 1>(rows, n, chunk);
    case 2: return run_pairs<K, PAYLOAD, 2>(rows, n, chunk);
    case 3: return run_pairs<K, PAYLOAD, 3>(rows, n, chunk);
    case sizeof(K): return run_pairs<K, PAYLOAD, sizeof(K)>(rows, n, chunk);
    default: return 4;
  }
}

/// radix_sort_encoded's launches: the keys of T's values sorted, written as keys with
/// their uint32 positions (POSITIONS) or alone; the pairs' buffer arrangement.
template <class T, bool POSITIONS> int run_encoded(int64_t rows, int64_t n, int64_t chunk) {
  typedef typename xrt::sort::Key<T>::S S;
  constexpr int P = sizeof(S);
  const int64_t total = rows * n, tiles = ceil_div(n, int64_t(kThreads) * kItems);
  if (chunk % (int64_t(kThreads) * xrt::radix::kUnroll) != 0) return 2;
  const int64_t chunks = ceil_div(n, chunk);
  std::vector<T> in(total);
  if (std::fread(in.data(), sizeof(T), total, stdin) != size_t(total)) return 3;
  std::vector<S> keys_out(total, S(0x3c)), keys0(total, S(0x5a)), keys1(total, S(0xa5));
  std::vector<uint32_t> index_out(total, 0xabu), index0(total, 7u), index1(total, 9u);
  std::vector<uint32_t> hist(rows * P * 256), desc(P * rows * tiles * 256),
      masks(rows, 0xdeadbeefu);
  constexpr int kPayload = POSITIONS ? xrt::radix::kPosition : xrt::radix::kNone;
  const dim3 block{kThreads};
  unsigned seed = 1;
  emu::launch({unsigned(rows * chunks)}, block, [&] {
    xrt::radix::upsweep<T, kThreads, false>(in.data(), hist.data(), nullptr, nullptr, n, chunk,
                                            chunks, false);
  }, 3, seed++);
  emu::launch({unsigned(rows)}, {256}, [&] { xrt::radix::plan<P>(hist.data(), masks.data(), n); },
              3, seed++);
  for (int pass = 0; pass < P; ++pass) {
    emu::launch({unsigned(rows * tiles)}, block, [&] {
      xrt::radix::pass<T, kPayload, kThreads, kItems, P, true>(
          in.data(), keys_out.data(), nullptr, POSITIONS ? index_out.data() : nullptr,
          keys0.data(), keys1.data(), index0.data(), index1.data(), hist.data(), masks.data(),
          desc.data() + pass * rows * tiles * 256, n, tiles, pass, false);
    }, 3, seed++);
  }
  std::fwrite(keys_out.data(), sizeof(S), total, stdout);
  if (POSITIONS) std::fwrite(index_out.data(), 4, total, stdout);
  return 0;
}

template <class T> int run_encoded(bool positions, int64_t rows, int64_t n, int64_t chunk) {
  return positions ? run_encoded<T, true>(rows, n, chunk) : run_encoded<T, false>(rows, n, chunk);
}

template <class T> int run(bool arg, int64_t rows, int64_t n, int64_t chunk, bool descending) {
  return arg ? run<T, true>(rows, n, chunk, descending) : run<T, false>(rows, n, chunk, descending);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 8 && std::string(argv[1]) == "pairs") {
    bool wide = std::atoi(argv[2]) != 0, payload = std::atoi(argv[3]) != 0;
    int passes = (std::atoi(argv[4]) + 7) / 8;
    int64_t rows = std::atoll(argv[5]), n = std::atoll(argv[6]), chunk = std::atoll(argv[7]);
    if (wide)
      return payload ? run_pairs<xrt::uint64_t, true>(passes, rows, n, chunk)
                     : run_pairs<xrt::uint64_t, false>(passes, rows, n, chunk);
    return payload ? run_pairs<xrt::uint32_t, true>(passes, rows, n, chunk)
                   : run_pairs<xrt::uint32_t, false>(passes, rows, n, chunk);
  }
  if (argc == 7 && std::string(argv[1]) == "encoded") {
    std::string dtype = argv[2];
    bool positions = std::atoi(argv[3]) != 0;
    int64_t rows = std::atoll(argv[4]), n = std::atoll(argv[5]), chunk = std::atoll(argv[6]);
    if (dtype == "int32") return run_encoded<xrt::int32_t>(positions, rows, n, chunk);
    if (dtype == "float64") return run_encoded<double>(positions, rows, n, chunk);
    return 1;
  }
  if (argc != 7) return 1;
  std::string dtype = argv[1];
  bool arg = std::atoi(argv[2]) != 0, descending = std::atoi(argv[3]) != 0;
  int64_t rows = std::atoll(argv[4]), n = std::atoll(argv[5]), chunk = std::atoll(argv[6]);
  if (dtype == "int8") return run<xrt::int8_t>(arg, rows, n, chunk, descending);
  if (dtype == "int16") return run<xrt::int16_t>(arg, rows, n, chunk, descending);
  if (dtype == "int32") return run<xrt::int32_t>(arg, rows, n, chunk, descending);
  if (dtype == "int64") return run<xrt::int64_t>(arg, rows, n, chunk, descending);
  if (dtype == "uint8") return run<xrt::uint8_t>(arg, rows, n, chunk, descending);
  if (dtype == "uint16") return run<xrt::uint16_t>(arg, rows, n, chunk, descending);
  if (dtype == "uint32") return run<xrt::uint32_t>(arg, rows, n, chunk, descending);
  if (dtype == "uint64") return run<xrt::uint64_t>(arg, rows, n, chunk, descending);
  if (dtype == "float16") return run<xrt::float16>(arg, rows, n, chunk, descending);
  if (dtype == "bfloat16") return run<xrt::bfloat16>(arg, rows, n, chunk, descending);
  if (dtype == "float32") return run<float>(arg, rows, n, chunk, descending);
  if (dtype == "float64") return run<double>(arg, rows, n, chunk, descending);
  return 1;
}
