// cpp/src/cpu/sort_keys.cpp: the contiguous value <-> key loops of the 32/64-bit dtypes,
// compiled for AVX-512, AVX2 and baseline x86-64 and picked at load time.
#include "cpu/sort_algorithms.h"

namespace xrt::cpu::sorting {

#if defined(__x86_64__) && defined(__GNUC__)
#define XRT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define XRT_CLONES
#endif

// The bodies are the templates of sort_algorithms.h, inlined into each clone.
#define XRT_SORT_KEY_LOOP(T, K)                                                 \
  XRT_CLONES bool encode_keys(const T* x, int64_t n, K* keys, K flip) {         \
    return encode_keys<T>(x, n, keys, flip);                                    \
  }
XRT_SORT_KEY_LOOP(float, uint32_t)
XRT_SORT_KEY_LOOP(double, uint64_t)
XRT_SORT_KEY_LOOP(int32_t, uint32_t)
XRT_SORT_KEY_LOOP(int64_t, uint64_t)

#define XRT_SORT_WORD_LOOP(T)                                                          \
  XRT_CLONES void encode_words(const T* x, int64_t n, uint64_t* words, uint32_t flip) { \
    encode_words<T>(x, n, words, flip);                                                \
  }
XRT_SORT_WORD_LOOP(float)
XRT_SORT_WORD_LOOP(int32_t)
XRT_SORT_WORD_LOOP(uint32_t)

}  // namespace xrt::cpu::sorting
