//===- AllToAllCase.h - an all-to-all the communicator tests exchange -----===//
//
// One rank's side of an all-to-all(v) of rows of 2 floats (and an int64 id
// per row) whose blocks differ in size per pair of ranks, with the values
// every rank must receive: MPICommunicatorTest.cpp and
// NCCLCommunicatorTest.cpp exchange it on host and GPU buffers.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_TEST_ALLTOALLCASE_H
#define GNNRT_TEST_ALLTOALLCASE_H

#include <cstdint>
#include <vector>

namespace gnnrt {

/// Rank `from` sends (from + to) % 3 + to rows to rank `to`; row k of that
/// block holds 1000 from + 100 to + 10 k + c in column c, and the id
/// 1000 from + k.
struct AllToAllCase {
  static constexpr int kWidth = 2;
  // Counts and displacements in rows, per rank: sent and received.
  std::vector<int64_t> sc, sd, rc, rd;
  std::vector<float> send, want;
  std::vector<int64_t> ids, wantIds;
  int64_t toOthers = 0; // the rows sent to other ranks

  AllToAllCase(int me, int n) : sc(n), sd(n), rc(n), rd(n) {
    auto rows = [](int from, int to) { return int64_t{(from + to) % 3 + to}; };
    auto value = [](int from, int to, int64_t k, int c) {
      return static_cast<float>(1000 * from + 100 * to + 10 * k + c);
    };
    int64_t sent = 0, received = 0;
    for (int q = 0; q < n; ++q) {
      sc[q] = rows(me, q);
      sd[q] = sent;
      sent += sc[q];
      toOthers += q == me ? 0 : sc[q];
      rc[q] = rows(q, me);
      rd[q] = received;
      received += rc[q];
    }
    send.resize(kWidth * sent);
    want.resize(kWidth * received);
    ids.resize(sent);
    wantIds.resize(received);
    for (int q = 0; q < n; ++q) {
      for (int64_t k = 0; k < sc[q]; ++k) {
        for (int c = 0; c < kWidth; ++c)
          send[kWidth * (sd[q] + k) + c] = value(me, q, k, c);
        ids[sd[q] + k] = 1000 * me + k;
      }
      for (int64_t k = 0; k < rc[q]; ++k) {
        for (int c = 0; c < kWidth; ++c)
          want[kWidth * (rd[q] + k) + c] = value(q, me, k, c);
        wantIds[rd[q] + k] = 1000 * q + k;
      }
    }
  }
};

} // namespace gnnrt

#endif // GNNRT_TEST_ALLTOALLCASE_H
