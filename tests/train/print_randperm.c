/* Prints torch_randperm(n, seed) (examples/common), one index a line, for
   test_torch_order.py to compare with torch.randperm. Usage: print_randperm N SEED */
#include <stdio.h>
#include <stdlib.h>

#include "torch_randperm.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: print_randperm N SEED\n");
    return 2;
  }
  const size_t n = (size_t)strtoull(argv[1], NULL, 10);
  const uint64_t seed = strtoull(argv[2], NULL, 10);
  size_t* perm = malloc((n ? n : 1) * sizeof *perm);
  if (!perm) return 1;
  torch_randperm(perm, n, seed);
  for (size_t i = 0; i < n; ++i) printf("%zu\n", perm[i]);
  free(perm);
  return 0;
}
