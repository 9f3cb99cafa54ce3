/* torch.randperm(n, generator=g) after g.manual_seed(seed), for shuffling the training
   set as bench/torch_reference.py does: the same seed gives the same order. The
   generator is the 32-bit Mersenne Twister (MT19937, seeded with the seed's low 32 bits,
   as PyTorch seeds its CPU generator); the permutation swaps element i with element
   i + (draw % (n - i)) for i = 0 .. n - 2, as PyTorch's CPU randperm does. */
#ifndef DP_EXAMPLES_TORCH_RANDPERM_H_
#define DP_EXAMPLES_TORCH_RANDPERM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mt19937 {
  uint32_t state[624];
  size_t next; /* index of the next word to temper; 624: regenerate first */
} mt19937;

void mt19937_seed(mt19937* g, uint32_t seed);
uint32_t mt19937_next(mt19937* g);

/* perm[0..n) = the permutation of 0 .. n - 1 that torch.randperm(n) gives after
   manual_seed(seed) in PyTorch 1.13, for any n (later versions shuffle another way above
   n = 214748364). Seeds equal in their low 32 bits give the same order. */
void torch_randperm(size_t* perm, size_t n, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif /* DP_EXAMPLES_TORCH_RANDPERM_H_ */
