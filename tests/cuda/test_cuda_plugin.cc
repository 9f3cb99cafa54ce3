// The plugin's start-up: without a driver (or a GPU) the context has zero CUDA devices,
// says why in the CUDA runtime's words and keeps working on CPU devices; DP_CUDA_DEVICES
// maps logical devices onto GPUs.

#include "cuda_test_util.h"
#include "device_map.h"
#include "error.h"

namespace dp {
namespace {

using cuda_test::LogRecord;
using cuda_test::make_context;

TEST(CudaPlugin, WithoutADriverTheContextHasNoCudaDevicesLogsWhyAndCpuDevicesWork) {
  if (!cuda_test::plugin_built()) GTEST_SKIP() << "the CUDA plugin was not built (no toolkit)";
  auto log = std::make_shared<LogRecord>();
  auto ctx = make_context(nullptr, 2, log);
  if (ctx->device_count(DeviceType::kCuda) > 0) {
    GTEST_SKIP() << "a CUDA device exists, so the no-driver path cannot be observed here";
  }
  const std::string& status = ctx->cuda_status();
  // The plugin itself loaded (its libraries resolve); the CUDA runtime said why not.
  EXPECT_EQ(status.find("CUDA plugin not loaded"), std::string::npos) << status;
  EXPECT_TRUE(status.find("cudaGetDeviceCount failed: ") != std::string::npos ||
              status.find("reports 0 devices") != std::string::npos)
      << status;
  EXPECT_TRUE(log->any([&](const std::string& line) {
    return line.find(status) != std::string::npos;
  })) << "the log callback did not receive \""
      << status << "\"";
  // Asking for a CUDA device names the reason.
  try {
    ctx->check_device(cuda(0), "device");
    FAIL() << "cuda:0 must not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kOutOfRange);
    EXPECT_NE(std::string(e.what()).find(status), std::string::npos) << e.what();
  }
  // CPU devices carry on.
  std::vector<float> a{1, 2, 3}, b{10, 20, 30};
  Tensor x = ops::from_host(ctx, {3}, DType::kFloat32, cpu(1), a.data());
  Tensor y = ops::from_host(ctx, {3}, DType::kFloat32, cpu(1), b.data());
  EXPECT_EQ(cuda_test::floats(ops::add(x, y)), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(ctx->default_devices().size(), 2u);
  EXPECT_TRUE(ctx->default_devices()[0].is_cpu());
}

TEST(CudaPlugin, ReportsItsDevicesWithNamesMemoryAndMultiprocessors) {
  auto ctx = make_context(nullptr);
  DP_SKIP_WITHOUT_CUDA(ctx, 1);
  Backend& b = ctx->backend(DeviceType::kCuda);
  for (int i = 0; i < ctx->device_count(DeviceType::kCuda); ++i) {
    uint64_t memory = 0, free_bytes = 0, total = 0;
    int sms = 0;
    b.properties(i, &memory, &sms);
    b.memory_info(i, &free_bytes, &total);
    EXPECT_GT(memory, 0u);
    EXPECT_GT(sms, 0);
    EXPECT_GT(total, 0u);
    EXPECT_LE(free_bytes, total);
    EXPECT_EQ(b.physical_index(i), i);
    EXPECT_EQ(b.device_name(i).rfind("cuda:" + std::to_string(i) + " (", 0), 0u)
        << b.device_name(i);
  }
  EXPECT_EQ(ctx->default_devices()[0], cuda(0));  // CUDA is the accelerator in use
}

TEST(CudaPlugin, TwoLogicalDevicesCanShareOneGpu) {
  auto ctx = make_context("0,0");
  DP_SKIP_WITHOUT_CUDA(ctx, 2);
  Backend& b = ctx->backend(DeviceType::kCuda);
  EXPECT_EQ(ctx->device_count(DeviceType::kCuda), 2);
  EXPECT_EQ(b.physical_index(0), 0);
  EXPECT_EQ(b.physical_index(1), 0);
}

TEST(CudaPlugin, AnOutOfMemoryAllocationIsAnOutOfMemoryErrorNamingTheDevice) {
  auto ctx = make_context(nullptr);
  DP_SKIP_WITHOUT_CUDA(ctx, 1);
  try {
    Tensor t = ops::empty(ctx, {int64_t{1} << 48}, DType::kFloat32, cuda(0));  // 1 PiB
    FAIL() << "a 1 PiB allocation cannot succeed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kOutOfMemory) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("cuda:0 (GPU 0): cudaMallocAsync of ", 0), 0u)
        << e.what();
  }
  // The device still works afterwards.
  Tensor t = ops::full(ctx, {4}, DType::kFloat32, cuda(0), 2.5);
  EXPECT_EQ(cuda_test::floats(t), std::vector<float>(4, 2.5f));
}

TEST(CudaDeviceMap, UnsetGivesOneLogicalDevicePerGpu) {
  std::string error;
  EXPECT_EQ(cuda_plugin::parse_device_map(nullptr, 3, &error), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(cuda_plugin::parse_device_map("", 2, &error), (std::vector<int>{0, 1}));
}

TEST(CudaDeviceMap, ListsMapLogicalDevicesOntoGpusAndMayRepeatOne) {
  std::string error;
  EXPECT_EQ(cuda_plugin::parse_device_map("0,0", 1, &error), (std::vector<int>{0, 0}));
  EXPECT_EQ(cuda_plugin::parse_device_map(" 1 , 0 ", 2, &error), (std::vector<int>{1, 0}));
  EXPECT_EQ(cuda_plugin::parse_device_map("0,0,0,0", 1, &error), (std::vector<int>(4, 0)));
}

TEST(CudaDeviceMap, ABadEntryIsAnErrorNamingIt) {
  std::string error;
  EXPECT_TRUE(cuda_plugin::parse_device_map("0,2", 2, &error).empty());
  EXPECT_EQ(error, "DP_CUDA_DEVICES = \"0,2\": entry 1 (\"2\") is not a GPU ordinal in [0, 2)");
  EXPECT_TRUE(cuda_plugin::parse_device_map("gpu0", 1, &error).empty());
  EXPECT_NE(error.find("entry 0 (\"gpu0\")"), std::string::npos) << error;
  EXPECT_TRUE(cuda_plugin::parse_device_map("0,", 1, &error).empty());
  EXPECT_NE(error.find("entry 1 (\"\")"), std::string::npos) << error;
  EXPECT_TRUE(cuda_plugin::parse_device_map("-1", 1, &error).empty());
}

}  // namespace
}  // namespace dp
