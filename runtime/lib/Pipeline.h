//===- Pipeline.h - P³'s pipeline of mini-batches ---------------*- C++ -*-===//
//
// P³ (docs/MiniBatch.md, "Pipelining"; DIGEST-mggcn-granndis-p3.md §3.4)
// keeps up to three mini-batches in flight: while one batch's sync (the
// pull of layer 1's partial activations to their owners, the push of their
// gradient back) is on the wire, other batches' phases compute.
//
// A batch's phases are the segments of its training step between its syncs:
// on a pipeline lane the runtime issues a sync without waiting, ends the
// segment (PipelineScheduler::yield) and waits for the sync when the batch's
// next segment starts. PipelineScheduler runs each batch in flight on a
// thread of its own (a lane), one lane at a time, in a static order: round r
// starts batch r and runs its first segment, then the next segment of each
// older batch in flight, newest first. For P³'s two syncs a batch has three
// segments (M-forward; D-forward and D-backward; M-backward), and the order
// is 2F2B's: MF(r), DF+DB(r-1), MB(r-2), so that two segments of other
// batches run between a sync's issue and its wait. A batch with more
// segments than lanes makes a round wait for a free lane (a round without a
// new batch), so no more than `lanes` batches are ever in flight. Every
// process runs the same order, so every process issues its collectives in
// the same order (MPI's rule).
//
// WeightStash holds the versions of the parameters that bounded staleness
// reads: batch t computes its gradients at version max(t - s, 0), in its
// forward and its backward alike (weight stashing), and its optimizer step
// applies them to the newest parameters: w_{t+1} = w_t - lr grad f(w_{t-s})
// (s = 3 in P³).
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_PIPELINE_H
#define GNNRT_PIPELINE_H

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gnnrt {

class PipelineScheduler {
public:
  /// At most `lanes` (>= 1) batches in flight. The lanes' OpenMP teams take
  /// `threads` threads each (the creating thread's, which a new thread does
  /// not inherit).
  PipelineScheduler(int lanes, int threads);
  /// Drains the batches still in flight and joins the lanes.
  ~PipelineScheduler();
  PipelineScheduler(const PipelineScheduler &) = delete;
  PipelineScheduler &operator=(const PipelineScheduler &) = delete;

  /// Starts the next batch, `job` (called with the batch's index, 0 for the
  /// first submitted, and its lane, in [0, lanes)), on a free lane and runs
  /// one round: its first segment, then the next segment of each older batch
  /// in flight, newest first. Returns when the round is done.
  void submit(std::function<void(int64_t batch, int lane)> job);
  /// Rounds without a new batch until no batch is in flight.
  void drain();

  /// On a lane: ends the running segment and returns when the scheduler runs
  /// the batch's next one. Elsewhere: returns at once.
  static void yield();
  /// Whether the calling thread is a lane of a scheduler.
  static bool onLane();

  /// A segment as it ran: the batch and the segment's index in it.
  struct Segment {
    int64_t batch;
    int segment;
  };
  /// The segments in the order they ran (kept when `keepTrace`, for tests).
  const std::vector<Segment> &trace() const { return ran; }
  void keepTrace() { tracing = true; }
  /// Called on the scheduler's thread before each segment, while no lane
  /// runs (the pending collectives' progress).
  void beforeEachSegment(std::function<void()> hook) {
    beforeSegment = std::move(hook);
  }
  /// The segments run and the most batches in flight at once, so far.
  int64_t segments() const { return segmentCount; }
  int mostInFlight() const { return most; }

private:
  struct Lane {
    int index = 0;
    std::thread thread;
    std::function<void(int64_t, int)> job;
    int64_t batch = -1; // -1: free
    int segment = 0;    // the next segment's index
  };
  void laneMain(Lane *lane);
  /// Hands the lane the turn and waits until it yields or its batch ends.
  void runSegment(Lane &lane);
  /// The next segment of each batch in flight older than `newest`, newest
  /// first.
  void advanceOlderThan(int64_t newest);
  int inFlight() const;

  const int maxLanes, threads;
  std::mutex mutex;
  std::condition_variable turn;
  std::vector<std::unique_ptr<Lane>> lanes;
  Lane *running = nullptr; // the lane that has the turn; null: the scheduler
  bool stopping = false;
  int64_t nextBatch = 0;
  bool tracing = false;
  std::function<void()> beforeSegment;
  std::vector<Segment> ran;
  int64_t segmentCount = 0;
  int most = 0;
};

class WeightStash {
public:
  /// Version 0: `initial`, the parameters before the first batch (one
  /// vector each); batch t reads version max(t - staleness, 0).
  WeightStash(int64_t staleness, std::vector<std::vector<float>> initial);

  int64_t staleness() const { return stale; }
  int64_t versionFor(int64_t batch) const {
    return batch > stale ? batch - stale : 0;
  }
  /// Parameter `i` of `version`; stops the run if that version was dropped or
  /// is not complete (its batch has not finished).
  const std::vector<float> &param(int64_t version, size_t i) const;
  /// Batch `batch` updated parameter `i` to `data` (`n` floats): version
  /// batch + 1's copy of it. Batches update each parameter in their order.
  void record(int64_t batch, size_t i, const float *data, int64_t n);
  /// Batch `batch` finished: version batch + 1 takes version batch's copy of
  /// each parameter it did not update (version batch is complete: batches
  /// finish in their order).
  void finish(int64_t batch);
  /// Batch `batch` read its version: the versions no later batch reads
  /// (below versionFor(batch + 1)) are dropped.
  void started(int64_t batch);
  /// The versions held now, and the most held at once.
  size_t held() const { return versions.size(); }
  size_t mostHeld() const { return most; }

private:
  struct Version {
    std::vector<std::vector<float>> params;
    std::vector<char> recorded; // by parameter
    bool complete = false;
  };
  Version &at(int64_t version);
  int64_t stale;
  size_t count; // parameters
  std::map<int64_t, Version> versions;
  size_t most = 1;
};

} // namespace gnnrt

#endif // GNNRT_PIPELINE_H
