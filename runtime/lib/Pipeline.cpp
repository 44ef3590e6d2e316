//===- Pipeline.cpp - P³'s pipeline of mini-batches -----------------------===//
//
// Pipeline.h.
//
//===----------------------------------------------------------------------===//

#include "Pipeline.h"

#include "Context.h"

#include <omp.h>

#include <algorithm>
#include <string>

using namespace gnnrt;

namespace {
/// The scheduler and lane of the calling thread, if it is a lane.
thread_local PipelineScheduler *laneScheduler = nullptr;
thread_local void *laneOfThread = nullptr;
} // namespace

PipelineScheduler::PipelineScheduler(int lanes, int threads)
    : maxLanes(std::max(lanes, 1)), threads(std::max(threads, 1)) {}

PipelineScheduler::~PipelineScheduler() {
  drain();
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  turn.notify_all();
  for (auto &lane : lanes)
    lane->thread.join();
}

void PipelineScheduler::laneMain(Lane *lane) {
  omp_set_num_threads(threads);
  laneScheduler = this;
  laneOfThread = lane;
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    turn.wait(lock, [&] { return running == lane || stopping; });
    if (stopping)
      return;
    std::function<void(int64_t, int)> job = std::move(lane->job);
    const int64_t batch = lane->batch;
    lock.unlock();
    job(batch, lane->index);
    lock.lock();
    lane->batch = -1;
    running = nullptr;
    turn.notify_all();
  }
}

void PipelineScheduler::yield() {
  PipelineScheduler *s = laneScheduler;
  if (!s)
    return;
  Lane *lane = static_cast<Lane *>(laneOfThread);
  std::unique_lock<std::mutex> lock(s->mutex);
  s->running = nullptr;
  s->turn.notify_all();
  s->turn.wait(lock, [&] { return s->running == lane; });
}

bool PipelineScheduler::onLane() { return laneScheduler != nullptr; }

void PipelineScheduler::runSegment(Lane &lane) {
  if (beforeSegment)
    beforeSegment();
  std::unique_lock<std::mutex> lock(mutex);
  if (tracing)
    ran.push_back({lane.batch, lane.segment});
  ++lane.segment;
  ++segmentCount;
  running = &lane;
  turn.notify_all();
  turn.wait(lock, [&] { return running == nullptr; });
}

int PipelineScheduler::inFlight() const {
  int n = 0;
  for (const auto &lane : lanes)
    n += lane->batch >= 0;
  return n;
}

void PipelineScheduler::advanceOlderThan(int64_t newest) {
  std::vector<Lane *> older;
  for (auto &lane : lanes)
    if (lane->batch >= 0 && lane->batch < newest)
      older.push_back(lane.get());
  std::sort(older.begin(), older.end(),
            [](const Lane *a, const Lane *b) { return a->batch > b->batch; });
  for (Lane *lane : older)
    runSegment(*lane);
}

void PipelineScheduler::submit(std::function<void(int64_t, int)> job) {
  if (onLane())
    fatal("PipelineScheduler::submit called from a lane");
  // Room for the batch: rounds without a new one until a lane is free.
  while (inFlight() == maxLanes)
    advanceOlderThan(nextBatch);
  Lane *free = nullptr;
  for (auto &lane : lanes)
    if (lane->batch < 0) {
      free = lane.get();
      break;
    }
  if (!free) {
    lanes.push_back(std::make_unique<Lane>());
    free = lanes.back().get();
    free->index = static_cast<int>(lanes.size()) - 1;
    free->thread = std::thread(&PipelineScheduler::laneMain, this, free);
  }
  const int64_t batch = nextBatch++;
  free->job = std::move(job);
  free->segment = 0;
  free->batch = batch;
  most = std::max(most, inFlight());
  runSegment(*free);
  advanceOlderThan(batch);
}

void PipelineScheduler::drain() {
  while (inFlight() > 0)
    advanceOlderThan(nextBatch);
}

//===----------------------------------------------------------------------===//
// WeightStash
//===----------------------------------------------------------------------===//

WeightStash::WeightStash(int64_t staleness,
                         std::vector<std::vector<float>> initial)
    : stale(std::max<int64_t>(staleness, 0)), count(initial.size()) {
  Version &v = versions[0];
  v.params = std::move(initial);
  v.recorded.assign(count, 1);
  v.complete = true;
}

WeightStash::Version &WeightStash::at(int64_t version) {
  Version &v = versions[version];
  if (v.params.empty() && count > 0) {
    v.params.resize(count);
    v.recorded.assign(count, 0);
  }
  most = std::max(most, versions.size());
  return v;
}

const std::vector<float> &WeightStash::param(int64_t version, size_t i) const {
  auto it = versions.find(version);
  if (it == versions.end() || !it->second.complete || i >= count)
    fatal("the pipeline's weight stash has no complete version " +
          std::to_string(version) + " of parameter #" + std::to_string(i));
  return it->second.params[i];
}

void WeightStash::record(int64_t batch, size_t i, const float *data,
                         int64_t n) {
  if (i >= count)
    fatal("the pipeline's weight stash has no parameter #" + std::to_string(i));
  Version &v = at(batch + 1);
  v.params[i].assign(data, data + n);
  v.recorded[i] = 1;
}

void WeightStash::finish(int64_t batch) {
  auto before = versions.find(batch);
  if (before == versions.end() || !before->second.complete)
    fatal("the pipeline's batch " + std::to_string(batch) +
          " finished before the version it follows was complete");
  Version &v = at(batch + 1);
  for (size_t i = 0; i < count; ++i)
    if (!v.recorded[i]) {
      v.params[i] = before->second.params[i];
      v.recorded[i] = 1;
    }
  v.complete = true;
}

void WeightStash::started(int64_t batch) {
  const int64_t keep = versionFor(batch + 1);
  versions.erase(versions.begin(), versions.lower_bound(keep));
}
