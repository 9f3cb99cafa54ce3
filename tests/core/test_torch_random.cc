// TorchGenerator against PyTorch 1.13's CPU generator. Each expected value was printed by
//   torch.manual_seed(42)
//   a = torch.empty(3, dtype=torch.float64).uniform_(-0.5, 2.0)
//   b = torch.empty(20, dtype=torch.float64).normal_(1.0, 2.0)
//   c = torch.empty(3, dtype=torch.float64).normal_(0.0, 1.0)
//   d = torch.empty(3, dtype=torch.float64).normal_(0.0, 1.0)
//   e = torch.empty(2, dtype=torch.float32).uniform_(-1, 1)
// in that order, from one generator (the float32 layers are checked against torch itself
// by bindings/python/tests/test_parity_torch.py).
#include <gtest/gtest.h>

#include <vector>

#include "device/torch_random.h"

namespace dp {
namespace {

TEST(TorchGenerator, DrawsPyTorchsNumbersInPyTorchsOrder) {
  TorchGenerator g(42);
  std::vector<double> a(3), b(20), c(3), d(3);
  std::vector<float> e(2);
  g.uniform(a.data(), a.size(), -0.5, 2.0);
  g.normal(b.data(), b.size(), 1.0, 2.0);  // blocks of 16, the last one drawn anew
  g.normal(c.data(), c.size(), 0.0, 1.0);  // pairs; the last pair's second value is kept
  g.normal(d.data(), d.size(), 0.0, 1.0);  // d[0] is that value
  g.uniform(e.data(), e.size(), -1.0, 1.0);
  EXPECT_EQ(a,
            (std::vector<double>{-0.35461378509642577, -0.3427245814385561, -0.19103481806397743}));
  EXPECT_EQ(
      b, (std::vector<double>{
             0.5341155820323473,  2.3423064423846007,   2.563534748509395,  -2.5806160100441238,
             1.1789603209312072,  1.076870476526709,    0.7635125217159329, -2.489113322168422,
             0.06107971383221433, 1.9145994787187282,   2.0354309813066855, 0.44587294636596064,
             2.710431922944574,   1.498823759383153,    1.5231673814225917, -2.05308784682165,
             0.3377213720966009,  -0.27556845444442946, 1.2143976543148443, 2.4192298359309383}));
  EXPECT_EQ(c, (std::vector<double>{-2.1255844351605426, 0.9628952045964599, 0.7595556750384621}));
  EXPECT_EQ(d, (std::vector<double>{0.7343315668212029, -0.6708039888147163, 2.742138343032193}));
  EXPECT_EQ(e, (std::vector<float>{0.21140754222869873f, -0.25495874881744385f}));
}

}  // namespace
}  // namespace dp
