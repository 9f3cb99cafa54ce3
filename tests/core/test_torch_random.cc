// TorchGenerator against PyTorch 1.13's CPU generator on an x86 machine with AVX2 (whose
// kernels round x * (to - from) + from and z * std + mean once, as std::fma does). Each
// expected value was printed by
//   torch.manual_seed(42)
//   a = torch.empty(24, dtype=torch.float64).uniform_(-0.5, 2.0)
//   b = torch.empty(20, dtype=torch.float64).normal_(1.0, 2.0)
//   c = torch.empty(5, dtype=torch.float64).normal_(0.0, 1.5)
//   d = torch.empty(3, dtype=torch.float64).normal_(0.5, 1.0)
//   e = torch.empty(4, dtype=torch.float32).uniform_(-1, 1)
// in that order, from one generator. Rounded twice instead of once, 7 of a's 24 values
// come out different. The float32 layers are checked against torch itself by
// bindings/python/tests/test_parity_torch.py.
#include <gtest/gtest.h>

#include <vector>

#include "device/torch_generator.h"

namespace dp {
namespace {

TEST(TorchGenerator, DrawsPyTorchsNumbersInPyTorchsOrder) {
  TorchGenerator g(42);
  std::vector<double> a(24), b(20), c(5), d(3);
  std::vector<float> e(4);
  g.uniform(a.data(), a.size(), -0.5, 2.0);
  g.normal(b.data(), b.size(), 1.0, 2.0);  // blocks of 16, the last one drawn anew
  g.normal(c.data(), c.size(), 0.0, 1.5);  // pairs; the last pair's second value is kept
  g.normal(d.data(), d.size(), 0.5, 1.0);  // d[0] is that value
  g.uniform(e.data(), e.size(), -1.0, 1.0);
  EXPECT_EQ(
      a,
      (std::vector<double>{
          -0.35461378509642577, -0.3427245814385561,  -0.19103481806397743, -0.3685495890973074,
          0.8154297421369046,   0.6919618844686991,   1.888089250622854,    1.821881453643574,
          -0.2911415781178304,  -0.16839831961575358, -0.10736625622322982, 0.4384175801262515,
          1.606299327078717,    1.6762526044592436,   0.44383238817639853,  1.0310914724844782,
          -0.2797255377135725,  1.2529547298745018,   1.0585077083855015,   0.5931974944766304,
          -0.3131628038156299,  1.2085755427666525,   0.2805967018074064,   0.27264694305818116}));
  EXPECT_EQ(b,
            (std::vector<double>{
                1.076870476526709,  0.7635125217159329,  -2.489113322168422,  0.06107971383221433,
                5.692951772945751,  -2.0337017124572383, -0.9696618759318487, 1.9146818256263343,
                1.3209784028596552, -0.8429977601719911, -1.21630471417867,   0.6252441231444072,
                4.139013601715295,  -1.3966445347571255, 1.010494073839628,   0.9910092276629283,
                3.9308701454936905, 2.8921669867233035,  -1.229851629154917,  3.2291807729923376}));
  EXPECT_EQ(c, (std::vector<double>{2.39705770896685, 0.1672293205433158, -0.05879504968127039,
                                    2.116730807451276, -0.9834164431286498}));
  EXPECT_EQ(d, (std::vector<double>{1.3576056954717783, -1.1270242729645132, -0.8951386877336391}));
  EXPECT_EQ(e, (std::vector<float>{-0.8300704956054688f, -0.9941606521606445f, 0.28611063957214355f,
                                   -0.2184438705444336f}));
}

}  // namespace
}  // namespace dp
