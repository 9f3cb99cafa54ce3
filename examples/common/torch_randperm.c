#include "torch_randperm.h"

enum { MT_N = 624, MT_M = 397 };

void mt19937_seed(mt19937* g, uint32_t seed) {
  g->state[0] = seed;
  for (uint32_t i = 1; i < MT_N; ++i) {
    const uint32_t prev = g->state[i - 1];
    g->state[i] = 1812433253u * (prev ^ (prev >> 30)) + i;
  }
  g->next = MT_N;
}

/* The next 624 words of the recurrence. */
static void regenerate(mt19937* g) {
  for (size_t i = 0; i < MT_N; ++i) {
    const uint32_t y = (g->state[i] & 0x80000000u) | (g->state[(i + 1) % MT_N] & 0x7fffffffu);
    g->state[i] = g->state[(i + MT_M) % MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
  }
  g->next = 0;
}

uint32_t mt19937_next(mt19937* g) {
  if (g->next >= MT_N) regenerate(g);
  uint32_t y = g->state[g->next++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

void torch_randperm(size_t* perm, size_t n, uint64_t seed) {
  mt19937 g;
  mt19937_seed(&g, (uint32_t)seed);
  for (size_t i = 0; i < n; ++i) perm[i] = i;
  for (size_t i = 0; i + 1 < n; ++i) {
    const size_t z = (size_t)((uint64_t)mt19937_next(&g) % (uint64_t)(n - i));
    const size_t t = perm[i];
    perm[i] = perm[i + z];
    perm[i + z] = t;
  }
}
