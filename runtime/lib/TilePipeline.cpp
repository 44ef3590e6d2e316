//===- TilePipeline.cpp - NeuGraph's sub-chunk pipeline -------------------===//

#include "TilePipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>

namespace gnnrt {

using Clock = std::chrono::steady_clock;

static double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TilePipeline::~TilePipeline() {
  if (!worker.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(mutex);
    stop = true;
  }
  wake.notify_all();
  worker.join();
}

void TilePipeline::loop() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    wake.wait(lock, [&] { return stop || next < jobs.size(); });
    if (stop)
      return;
    const size_t i = next++;
    const unsigned j = jobs[i];
    bool ok = !failed;
    double seconds = 0;
    if (ok) {
      lock.unlock();
      std::string error;
      const Clock::time_point t0 = Clock::now();
      ok = (*reader)(j, error);
      seconds = since(t0);
      lock.lock();
      if (!ok && !failed) {
        failed = true;
        jobError = std::move(error);
      }
    }
    jobSeconds[i] = seconds;
    jobOk[i] = ok;
    finished = i + 1;
    done.notify_all();
  }
}

std::vector<unsigned> TilePipeline::orderFor(const Key &key, unsigned n,
                                             bool pinFirst, bool pinLast) {
  std::vector<unsigned> order(n);
  std::iota(order.begin(), order.end(), 0u);
  auto it = profiles.find(key);
  if (it == profiles.end() || it->second.sum.size() != n ||
      it->second.visits < kProfiledVisits)
    return order;
  Profile &p = it->second;
  // A fixed order keeps the pins it was made with: the same tile (slot,
  // chunk, side, rows) always has the same.
  if (!p.order.empty() && (!pinFirst || p.order.front() == 0) &&
      (!pinLast || p.order.back() == n - 1))
    return p.order;
  // The free sub-chunks: a random order, improved by swaps on their mean
  // times; the pinned ones around them.
  const unsigned lo = pinFirst ? 1 : 0, hi = n - (pinLast && n > lo ? 1 : 0);
  std::vector<SubChunkTimes> times;
  std::vector<unsigned> free;
  for (unsigned j = lo; j < hi; ++j) {
    free.push_back(static_cast<unsigned>(times.size()));
    times.push_back(
        {p.sum[j].transfer / p.visits, p.sum[j].compute / p.visits});
  }
  std::mt19937_64 rng(static_cast<uint64_t>(key[0] * 1000003 + key[1]) ^
                      static_cast<uint64_t>(key[2] * 7919 + key[3]));
  std::shuffle(free.begin(), free.end(), rng);
  const SwapResult swapped = swapSchedule(times, free);
  p.order.clear();
  if (pinFirst)
    p.order.push_back(0);
  for (unsigned f : swapped.order)
    p.order.push_back(lo + f);
  if (hi < n)
    p.order.push_back(n - 1);
  if (!std::is_sorted(p.order.begin(), p.order.end()))
    ++reordered;
  return p.order;
}

bool TilePipeline::run(const Key &key, const std::vector<unsigned> &order,
                       const std::function<bool(unsigned, std::string &)> &read,
                       const std::function<void(unsigned)> &compute,
                       std::string &error) {
  const Clock::time_point t0 = Clock::now();
  if (!worker.joinable())
    worker = std::thread([this] { loop(); });
  {
    std::lock_guard<std::mutex> lock(mutex);
    reader = &read;
    jobs = order;
    next = finished = 0;
    failed = false;
    jobSeconds.assign(order.size(), 0.0);
    jobOk.assign(order.size(), false);
    jobError.clear();
  }
  wake.notify_all();
  std::vector<SubChunkTimes> times(order.size());
  bool ok = true;
  for (size_t i = 0; i < order.size(); ++i) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      done.wait(lock, [&] { return finished > i; });
      ok = jobOk[i];
    }
    if (!ok)
      break;
    const Clock::time_point c0 = Clock::now();
    compute(order[i]);
    times[order[i]].compute = since(c0);
  }
  // Wait for the skipped reads too: the jobs name this frame's reader.
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return finished == order.size(); });
  for (size_t i = 0; i < order.size(); ++i)
    times[order[i]].transfer = jobSeconds[i];
  jobs.clear();
  next = finished = 0;
  reader = nullptr;
  if (!ok) {
    error = jobError;
    return false;
  }
  Profile &p = profiles[key];
  if (p.sum.size() != order.size()) {
    p.sum.assign(order.size(), SubChunkTimes());
    p.visits = 0;
    p.order.clear();
  }
  const double wall = since(t0);
  if (p.visits < kProfiledVisits) {
    for (size_t j = 0; j < order.size(); ++j) {
      p.sum[j].transfer += times[j].transfer;
      p.sum[j].compute += times[j].compute;
    }
    p.wall += wall;
    ++p.visits;
  }
  ++tiles;
  for (const SubChunkTimes &t : times) {
    readSeconds += t.transfer;
    computeSeconds += t.compute;
  }
  wallSeconds += wall;
  return true;
}

TilePipeline::Plan TilePipeline::planFor(const Key &key) const {
  auto it = profiles.find(key);
  if (it == profiles.end() || it->second.visits < kProfiledVisits)
    return Plan::Pipelined;
  if (!it->second.measured)
    return Plan::Baseline;
  return it->second.off ? Plan::Unpipelined : Plan::Pipelined;
}

void TilePipeline::recordBaseline(const Key &key, double seconds) {
  ++unpipelined;
  auto it = profiles.find(key);
  if (it == profiles.end() || it->second.measured ||
      it->second.visits < kProfiledVisits)
    return;
  Profile &p = it->second;
  p.measured = true;
  p.off = !(p.wall / p.visits < gain * seconds);
  offTiles += p.off;
}

std::string TilePipeline::json() const {
  char text[400];
  std::snprintf(text, sizeof text,
                "\"pipeline\": {\"sub_chunks\": %lld, \"tiles\": %lld, "
                "\"reordered\": %lld, \"read_s\": %.6g, \"compute_s\": %.6g, "
                "\"wall_s\": %.6g, \"off_tiles\": %lld, "
                "\"unpipelined\": %lld}",
                static_cast<long long>(subChunks),
                static_cast<long long>(tiles),
                static_cast<long long>(reordered), readSeconds, computeSeconds,
                wallSeconds, static_cast<long long>(offTiles),
                static_cast<long long>(unpipelined));
  return text;
}

} // namespace gnnrt
