//===- NpyTest.cpp - ranged reads of .npy files ---------------------------===//
//
// readNpyRows against the whole array (readNpy) on random arrays written by
// writeNpy: every row range of a 2-D f32 array, column ranges, a 1-D i64
// array, a 3-D array's rows (the last axes flattened), empty ranges; a range
// outside the shape, a scalar and the wrong dtype are errors that name them.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace gnnrt;

namespace {

/// A file name in the test's temporary directory, removed at the end.
class NpyFile {
public:
  explicit NpyFile(const std::string &name) {
    const char *dir = std::getenv("TMPDIR");
    path = std::string(dir ? dir : "/tmp") + "/gnnrt-npy-" +
           std::to_string(::getpid()) + "-" + name;
  }
  ~NpyFile() { std::remove(path.c_str()); }
  std::string path;
};

} // namespace

TEST(RuntimeNpy, RowAndColumnRangesMatchTheWholeArray) {
  std::mt19937 rng(20261125);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t rows = 37, cols = 13;
  std::vector<float> a(rows * cols);
  for (float &x : a)
    x = normal(rng);
  NpyFile file("f32.npy");
  std::string error;
  ASSERT_TRUE(writeNpy(file.path, DType::F32, {rows, cols}, a.data(), error))
      << error;
  NpyHeader header;
  std::vector<float> whole;
  ASSERT_TRUE(
      readNpy(file.path, "f32.npy", DType::F32, 2, header, whole, error));
  ASSERT_EQ(whole, a);
  for (int64_t b = 0; b <= rows; b += 4)
    for (int64_t e = b; e <= rows; e += 5)
      for (auto [cb, ce] : std::vector<std::pair<int64_t, int64_t>>{
               {0, -1}, {0, cols}, {3, 9}, {12, 13}, {5, 5}}) {
        std::vector<float> got;
        NpyRange range{b, e, cb, ce};
        ASSERT_TRUE(readNpyRows(file.path, "f32.npy", DType::F32, 2, range,
                                header, got, error))
            << error;
        const int64_t width = (ce < 0 ? cols : ce) - cb;
        ASSERT_EQ(static_cast<int64_t>(got.size()), (e - b) * width);
        for (int64_t r = b; r < e; ++r)
          for (int64_t c = 0; c < width; ++c)
            ASSERT_EQ(got[(r - b) * width + c], a[r * cols + cb + c])
                << "rows [" << b << ", " << e << ") columns from " << cb;
      }
}

TEST(RuntimeNpy, OneAndThreeAxes) {
  std::vector<int64_t> v(1000);
  for (int64_t i = 0; i < 1000; ++i)
    v[i] = i * i - 7;
  NpyFile f1("i64.npy"), f3("u8.npy");
  std::string error;
  NpyHeader header;
  ASSERT_TRUE(writeNpy(f1.path, DType::I64, {1000}, v.data(), error));
  std::vector<int64_t> got;
  ASSERT_TRUE(readNpyRows(f1.path, "i64.npy", DType::I64, 1, {250, 751}, header,
                          got, error))
      << error;
  ASSERT_EQ(got, std::vector<int64_t>(v.begin() + 250, v.begin() + 751));
  // Rows of a [4, 3, 5] array are 15 elements.
  std::vector<uint8_t> c(60);
  for (int i = 0; i < 60; ++i)
    c[i] = static_cast<uint8_t>(i * 3);
  ASSERT_TRUE(writeNpy(f3.path, DType::U8, {4, 3, 5}, c.data(), error));
  std::vector<uint8_t> rows;
  ASSERT_TRUE(readNpyRows(f3.path, "u8.npy", DType::U8, 3, {1, 3, 2, 7}, header,
                          rows, error))
      << error;
  ASSERT_EQ(rows.size(), 10u);
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 5; ++k)
      ASSERT_EQ(rows[r * 5 + k], c[(r + 1) * 15 + 2 + k]);
}

TEST(RuntimeNpy, RangesOutsideTheShapeAreErrors) {
  std::vector<float> a(6 * 4, 1.0f);
  NpyFile file("small.npy"), scalar("scalar.npy");
  std::string error;
  NpyHeader header;
  ASSERT_TRUE(writeNpy(file.path, DType::F32, {6, 4}, a.data(), error));
  std::vector<float> got;
  EXPECT_FALSE(readNpyRows(file.path, "small.npy", DType::F32, 2, {2, 7},
                           header, got, error));
  EXPECT_EQ(error, "small.npy: rows [2, 7) of 6 (shape (6, 4))");
  EXPECT_FALSE(readNpyRows(file.path, "small.npy", DType::F32, 2, {3, 2},
                           header, got, error));
  EXPECT_EQ(error, "small.npy: rows [3, 2) of 6 (shape (6, 4))");
  EXPECT_FALSE(readNpyRows(file.path, "small.npy", DType::F32, 2, {0, 6, 1, 5},
                           header, got, error));
  EXPECT_EQ(error, "small.npy: columns [1, 5) of 4 per row (shape (6, 4))");
  EXPECT_FALSE(readNpyRows(file.path, "small.npy", DType::I64, 2, {0, 1},
                           header, got, error));
  EXPECT_EQ(error, "small.npy: dtype float32 but the format needs int64");
  float one = 1.0f;
  ASSERT_TRUE(writeNpy(scalar.path, DType::F32, {}, &one, error));
  EXPECT_FALSE(readNpyRows(scalar.path, "scalar.npy", DType::F32, -1, {0, 0},
                           header, got, error));
  EXPECT_EQ(error, "scalar.npy: a scalar (shape ()) has no rows to read");
}
