//===- Summary.cpp - parts of the driver's --json summary -----------------===//

#include "Summary.h"

#include "File.h"
#include "Memory.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace gnnrt {

std::vector<int64_t> predictions(gnnrtContext *ctx) {
  const int64_t V = ctx->ds.numVertices, C = ctx->ds.numClasses;
  std::vector<char> staging;
  const auto *logits = static_cast<const float *>(ctx->device->hostView(
      ctx->logits, V * C * static_cast<int64_t>(sizeof(float)), staging));
  std::vector<int64_t> pred(V);
  for (int64_t v = 0; v < V; ++v) {
    const float *row = logits + v * C;
    pred[v] = std::max_element(row, row + C) - row;
  }
  return pred;
}

std::string memoryJson(const gnnrtContext *ctx, int64_t budget,
                       const TrainingMemory &need) {
  std::string text;
  auto appendf = [&text](const char *format, auto... args) {
    appendFormat(text, format, args...);
  };
  // What the driver estimated before allocating (TrainingMemory) and the
  // device memory's high-water mark: they agree when the estimate holds.
  const MemoryCounters counters = ctx->device->memoryCounters();
  appendf("  \"memory\": {\"budget_bytes\": %lld, \"peak_resident_bytes\": "
          "%lld, \"copied_to_device_bytes\": %lld, "
          "\"copied_to_host_bytes\": %lld,\n             "
          "\"device_peak_bytes\": %lld, ",
          static_cast<long long>(budget),
          static_cast<long long>(peakResidentMemory()),
          static_cast<long long>(counters.copiedToDevice),
          static_cast<long long>(counters.copiedToHost),
          static_cast<long long>(counters.peak));
  // The slow tier's traffic (gnnrtEvict, gnnrtFetch): 0 without a spill
  // directory or when the program evicts nothing.
  const SpillCounters spilled =
      ctx->spill ? ctx->spill->counters() : SpillCounters();
  appendf("\"uncached_reads\": %s, ", uncachedReads() ? "true" : "false");
  appendf("\"spill_written_bytes\": %lld, \"spill_read_bytes\": %lld, "
          "\"evictions\": %lld, \"fetches\": %lld,\n             ",
          static_cast<long long>(spilled.writtenBytes),
          static_cast<long long>(spilled.readBytes),
          static_cast<long long>(spilled.evictions),
          static_cast<long long>(spilled.fetches));
  // The features and the graph out of core: what their chunks and
  // windows read of features.npy, indices.npy and the spill file's CSR.
  const GraphWindowCounters windows = ctx->graphOnStorage
                                          ? ctx->graphOnStorage->counters()
                                          : GraphWindowCounters();
  appendf("\"features_read_bytes\": %lld, \"feature_fetches\": %lld, "
          "\"graph_read_bytes\": %lld, \"graph_windows\": %lld, "
          "\"graph_read_seconds\": %.6f,\n             ",
          static_cast<long long>(spilled.sourceReadBytes),
          static_cast<long long>(spilled.sourceFetches),
          static_cast<long long>(windows.readBytes),
          static_cast<long long>(windows.windows), windows.seconds);
  // Selective loading of the tiles' input chunks (SelectiveLoad.h).
  text += ctx->selective.json(spilled) + ",\n             ";
  text += ctx->pipeline.json() + ",\n             ";
  appendf("\"estimate\": {\"activations\": %lld, \"parameters\": %lld, "
          "\"optimizer\": %lld, \"features\": %lld, \"graph\": %lld, "
          "\"edge_inputs\": %lld, \"unknown_buffers\": %s}},\n",
          static_cast<long long>(need.activations),
          static_cast<long long>(need.parameters),
          static_cast<long long>(need.optimizer),
          static_cast<long long>(need.features),
          static_cast<long long>(need.graph),
          static_cast<long long>(need.edgeInputs),
          need.unknownBuffers ? "true" : "false");
  return text;
}

} // namespace gnnrt
