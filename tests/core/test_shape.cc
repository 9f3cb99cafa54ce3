// Shapes: element counts with overflow checks, dims, broadcasting.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "error.h"
#include "tensor/shape.h"

namespace dp {
namespace {

TEST(Shape, NumelMultipliesSizesAndAcceptsZero) {
  EXPECT_EQ(checked_numel({2, 3, 4}, 4), 24);
  EXPECT_EQ(checked_numel({}, 4), 1);
  EXPECT_EQ(checked_numel({5, 0, 7}, 4), 0);
}

TEST(Shape, NumelRejectsProductsPast2To63) {
  EXPECT_THROW(checked_numel({1LL << 32, 1LL << 32}, 1), Error);
  try {
    checked_numel({3037000500LL, 3037000500LL}, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kOutOfRange);
  }
}

// An empty tensor's other sizes must multiply within int64: reducing over the zero (a sum
// along that dim) gives a tensor of exactly those sizes.
TEST(Shape, NumelOfAnEmptyShapeStillBoundsItsNonZeroSizes) {
  EXPECT_EQ(checked_numel({0, std::numeric_limits<int64_t>::max(), 1}, 4), 0);
  try {
    checked_numel({0, std::numeric_limits<int64_t>::max(), 4}, 4);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kOutOfRange);
    EXPECT_NE(std::string(e.what()).find("[0, 9223372036854775807, 4]: its non-zero sizes"),
              std::string::npos)
        << e.what();
  }
}

TEST(Shape, NumelRejectsNegativeSizesNamingTheIndex) {
  try {
    checked_numel({2, -1}, 4);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_STREQ(e.what(), "shape[1] = -1 is negative");
  }
}

TEST(Shape, WrapDimAcceptsNegativeDims) {
  EXPECT_EQ(wrap_dim(-1, 3), 2);
  EXPECT_EQ(wrap_dim(0, 3), 0);
  EXPECT_EQ(wrap_dim(-1, 0), 0);
  EXPECT_THROW(wrap_dim(3, 3), Error);
  EXPECT_THROW(wrap_dim(-4, 3), Error);
}

TEST(Shape, BroadcastFollowsNumpyRules) {
  EXPECT_EQ(broadcast_shapes({4, 1, 3}, {5, 1}), (Shape{4, 5, 3}));
  EXPECT_EQ(broadcast_shapes({}, {2, 2}), (Shape{2, 2}));
  EXPECT_EQ(broadcast_shapes({256, 10}, {10}), (Shape{256, 10}));
  EXPECT_THROW(broadcast_shapes({3}, {4}), Error);
}

}  // namespace
}  // namespace dp
