//===- FeaturePull.cpp - feature rows pulled from their owners ------------===//

#include "FeaturePull.h"

#include "Context.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <numeric>
#include <string>

using namespace gnnrt;

FeaturePuller::FeaturePuller(Communicator &comm, std::vector<int64_t> starts,
                             const float *own, int64_t width, int copies)
    : comm(comm), starts(std::move(starts)), own(own), width(width),
      groups(comm.size() / copies), ownRange(comm.rank() % groups),
      copyBase(comm.rank() / groups * groups) {
  assert(copies >= 1 && comm.size() % copies == 0 &&
         static_cast<int>(this->starts.size()) == groups + 1 &&
         this->starts.front() == 0 && "a start per range and the end");
}

int FeaturePuller::range(int64_t v) const {
  // The last range whose first row is at most v (empty ranges skipped).
  return static_cast<int>(
      std::upper_bound(starts.begin(), starts.end() - 1, v) - starts.begin() -
      1);
}

int FeaturePuller::owner(int64_t v) const { return copyBase + range(v); }

int64_t FeaturePuller::pull(const int64_t *vertices, int64_t n, float *out) {
  Pending pending = start(vertices, n, out);
  return finish(pending);
}

FeaturePuller::Pending FeaturePuller::start(const int64_t *vertices, int64_t n,
                                            float *out) {
  const int size = comm.size(), me = comm.rank();
  const size_t rowBytes = static_cast<size_t>(width) * sizeof(float);
  // The rows asked of each process, grouped by owner (a counting sort that
  // keeps each owner's rows in the order asked); the own rows copied.
  std::vector<int> owners(n);
  std::vector<int64_t> asked(size, 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = vertices[i];
    if (v < 0 || v >= starts.back())
      fatal("internal error: feature row " + std::to_string(v) + " asked, of " +
            std::to_string(starts.back()));
    owners[i] = owner(v);
    if (owners[i] == me)
      std::memcpy(out + i * width, own + (v - starts[ownRange]) * width,
                  rowBytes);
    else
      ++asked[owners[i]];
  }
  std::vector<int64_t> askedAt(size);
  std::exclusive_scan(asked.begin(), asked.end(), askedAt.begin(), int64_t{0});
  Pending p;
  p.out = out;
  p.started = true;
  p.pulled = askedAt[size - 1] + asked[size - 1];
  std::vector<int64_t> ids(p.pulled);
  p.slots.resize(p.pulled);
  {
    std::vector<int64_t> next = askedAt;
    for (int64_t i = 0; i < n; ++i)
      if (owners[i] != me) {
        const int64_t k = next[owners[i]]++;
        ids[k] = vertices[i];
        p.slots[k] = i;
      }
  }
  // How many rows each process asks of this one.
  std::vector<int64_t> ones(size, 1), ranks(size), givenCount(size, 0);
  for (int q = 0; q < size; ++q)
    ranks[q] = q;
  comm.allToAllV(asked.data(), ones.data(), ranks.data(), givenCount.data(),
                 ones.data(), ranks.data());
  std::vector<int64_t> givenAt(size);
  std::exclusive_scan(givenCount.begin(), givenCount.end(), givenAt.begin(),
                      int64_t{0});
  const int64_t given = givenAt[size - 1] + givenCount[size - 1];
  // The ids asked, then their rows back.
  std::vector<int64_t> givenIds(given);
  comm.allToAllV(ids.data(), asked.data(), askedAt.data(), givenIds.data(),
                 givenCount.data(), givenAt.data());
  p.sent.resize(static_cast<size_t>(given * width));
  for (int64_t k = 0; k < given; ++k) {
    const int64_t v = givenIds[k];
    if (v < starts[ownRange] || v >= starts[ownRange + 1])
      fatal("internal error: a process asked for feature row " +
            std::to_string(v) + ", which this one does not hold");
    std::memcpy(p.sent.data() + k * width, own + (v - starts[ownRange]) * width,
                rowBytes);
  }
  p.received.resize(static_cast<size_t>(p.pulled * width));
  p.request =
      comm.iAllToAllV(p.sent.data(), givenCount.data(), givenAt.data(),
                      p.received.data(), asked.data(), askedAt.data(), width);
  rowsSent += given; // no process asks itself: givenCount[me] is 0
  requestsSent += (size - 1) + p.pulled;
  return p;
}

int64_t FeaturePuller::finish(Pending &p) {
  if (!p.started)
    fatal("internal error: a feature pull finished that was not started");
  comm.wait(p.request);
  const size_t rowBytes = static_cast<size_t>(width) * sizeof(float);
  for (int64_t k = 0; k < p.pulled; ++k)
    std::memcpy(p.out + p.slots[k] * width, p.received.data() + k * width,
                rowBytes);
  p.started = false;
  p.sent = {};
  p.received = {};
  return p.pulled;
}
