//===- RowSplit.cpp - how row partitioning splits the vertices ------------===//

#include "RowSplit.h"

#include <algorithm>
#include <cmath>

using namespace gnnrt;

std::vector<int64_t> gnnrt::equalVertexSplit(int64_t numVertices, int parts) {
  std::vector<int64_t> p(parts + 1);
  for (int r = 0; r <= parts; ++r)
    p[r] = numVertices * r / parts;
  return p;
}

/// Makes p strictly increasing with p(0) = 0 and p(N) = V (V >= N): each
/// point at least one past the previous and leaving one vertex per part
/// after it.
static void keepPartsNonEmpty(std::vector<int64_t> &p, int64_t V) {
  const int parts = static_cast<int>(p.size()) - 1;
  p[0] = 0;
  p[parts] = V;
  for (int r = 1; r < parts; ++r)
    p[r] = std::min(std::max(p[r], p[r - 1] + 1), V - (parts - r));
}

std::vector<int64_t> gnnrt::equalEdgeSplit(const std::vector<int64_t> &indptr,
                                           int parts) {
  const int64_t V = static_cast<int64_t>(indptr.size()) - 1, E = indptr[V];
  std::vector<int64_t> p(parts + 1);
  for (int r = 0; r <= parts; ++r) {
    const int64_t target = E * r / parts;
    p[r] = std::lower_bound(indptr.begin(), indptr.end() - 1, target) -
           indptr.begin();
  }
  keepPartsNonEmpty(p, V);
  return p;
}

RocFeatures gnnrt::rocFeatures(const int32_t *neighbours, int64_t count,
                               int64_t width, int64_t lineFloats) {
  RocFeatures x{1.0, static_cast<double>(count), 0.0, 0.0, 0.0};
  auto run = [&](int64_t length) {
    x[2] += 1.0;
    x[3] += static_cast<double>((length + lineFloats - 1) / lineFloats);
    x[4] += static_cast<double>((length * width + lineFloats - 1) / lineFloats);
  };
  int64_t length = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (i > 0 && neighbours[i] != neighbours[i - 1] + 1) {
      run(length);
      length = 0;
    }
    ++length;
  }
  if (length)
    run(length);
  return x;
}

RocPartitioner::RocPartitioner(const std::vector<RocFeatures> &perVertex)
    : prefix(perVertex.size() + 1) {
  for (size_t v = 0; v < perVertex.size(); ++v)
    for (int i = 0; i < kRocFeatures; ++i)
      prefix[v + 1][i] = prefix[v][i] + perVertex[v][i];
}

RocFeatures RocPartitioner::features(int64_t lo, int64_t hi) const {
  RocFeatures x;
  for (int i = 0; i < kRocFeatures; ++i)
    x[i] = prefix[hi][i] - prefix[lo][i];
  return x;
}

void RocPartitioner::observe(int64_t lo, int64_t hi, double seconds) {
  points.push_back({features(lo, hi), seconds});
}

/// Solves the k x k system a x = b (Gaussian elimination with partial
/// pivoting); false when singular.
static bool solve(std::vector<std::vector<double>> a, std::vector<double> b,
                  std::vector<double> &x) {
  const size_t k = b.size();
  for (size_t c = 0; c < k; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < k; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c]))
        pivot = r;
    if (std::fabs(a[pivot][c]) < 1e-300)
      return false;
    std::swap(a[c], a[pivot]);
    std::swap(b[c], b[pivot]);
    for (size_t r = c + 1; r < k; ++r) {
      const double f = a[r][c] / a[c][c];
      for (size_t j = c; j < k; ++j)
        a[r][j] -= f * a[c][j];
      b[r] -= f * b[c];
    }
  }
  x.assign(k, 0.0);
  for (size_t c = k; c-- > 0;) {
    double s = b[c];
    for (size_t j = c + 1; j < k; ++j)
      s -= a[c][j] * x[j];
    x[c] = s / a[c][c];
  }
  return true;
}

bool RocPartitioner::fit() {
  if (points.empty())
    return false;
  // The features scaled to comparable magnitudes, with a small ridge so
  // that the collinear ones (x2, x4, x5 grow together) stay determined.
  RocFeatures scale{};
  for (const auto &[x, y] : points)
    for (int i = 0; i < kRocFeatures; ++i)
      scale[i] = std::max(scale[i], std::fabs(x[i]));
  std::vector<int> active;
  for (int i = 0; i < kRocFeatures; ++i)
    if (scale[i] > 0)
      active.push_back(i);
  while (!active.empty()) {
    const size_t k = active.size();
    std::vector<std::vector<double>> a(k, std::vector<double>(k, 0.0));
    std::vector<double> b(k, 0.0), sol;
    for (const auto &[x, y] : points)
      for (size_t r = 0; r < k; ++r) {
        const double xr = x[active[r]] / scale[active[r]];
        b[r] += xr * y;
        for (size_t c = 0; c < k; ++c)
          a[r][c] += xr * x[active[c]] / scale[active[c]];
      }
    double trace = 0;
    for (size_t r = 0; r < k; ++r)
      trace += a[r][r];
    for (size_t r = 0; r < k; ++r)
      a[r][r] += 1e-6 * trace / static_cast<double>(k);
    if (!solve(a, b, sol))
      return false;
    auto worst = std::min_element(sol.begin(), sol.end());
    if (*worst < 0) { // drop the most negative feature and refit
      active.erase(active.begin() + (worst - sol.begin()));
      continue;
    }
    w = RocFeatures{};
    for (size_t r = 0; r < k; ++r)
      w[active[r]] = sol[r] / scale[active[r]];
    return true;
  }
  return false;
}

double RocPartitioner::predict(int64_t lo, int64_t hi) const {
  const RocFeatures x = features(lo, hi);
  double t = 0;
  for (int i = 0; i < kRocFeatures; ++i)
    t += w[i] * x[i];
  return t;
}

std::vector<int64_t> RocPartitioner::split(int parts) const {
  const int64_t V = numVertices();
  const double total = predict(0, V);
  std::vector<int64_t> p(parts + 1);
  // predict(0, v) does not decrease with v (w >= 0, x >= 0).
  for (int r = 0; r <= parts; ++r) {
    const double target = total * r / parts;
    int64_t lo = 0, hi = V;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (predict(0, mid) < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    p[r] = lo;
  }
  keepPartsNonEmpty(p, V);
  return p;
}

double RocPartitioner::predictedMax(const std::vector<int64_t> &starts) const {
  double most = 0;
  for (size_t r = 0; r + 1 < starts.size(); ++r)
    most = std::max(most, predict(starts[r], starts[r + 1]));
  return most;
}
