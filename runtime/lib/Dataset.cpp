//===- Dataset.cpp - loading and validating datasets ----------------------===//
//
// Mirrors python/gnnc/data/format.py: both reject test/datasets/bad/ with the
// messages in its expected.txt files.
//
//===----------------------------------------------------------------------===//

#include "Dataset.h"
#include "File.h"
#include "Json.h"
#include "Npy.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <numeric>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace gnnrt {

/// The largest counts meta.json may give (python/gnnc/data/format.py has the
/// same): vertex and edge ids are int32 (indices.npy, the CSR's edge ids), and
/// the gnn verifier bounds rows at 2^24 elements (a row of features, a row of
/// logits of one element per class).
struct CountLimit {
  const char *key;
  int64_t max;
  const char *why;
};
static constexpr CountLimit kCountLimits[] = {
    {"num_vertices", INT32_MAX, "vertex ids are int32"},
    {"num_edges", INT32_MAX, "edge ids are int32"},
    {"num_features", int64_t(1) << 24,
     "the most elements a row of features may have"},
    {"num_classes", int64_t(1) << 24,
     "the most elements a row of logits may have"},
};

/// Edge data names are those of gnn.input (letters, digits, '_'); they make
/// the file name edge_<name>.npy.
static bool isEdgeDataName(const std::string &n) {
  if (n.empty())
    return false;
  for (char c : n)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

std::string datasetFile(const std::string &dir, const std::string &file) {
  return dir.empty() || dir.back() == '/' ? dir + file : dir + "/" + file;
}

bool checkIndptr(const std::vector<int64_t> &indptr, int64_t numEdges,
                 std::string &error) {
  if (indptr.empty()) {
    error = "indptr.npy: empty (needs V+1 entries)";
    return false;
  }
  const int64_t V = static_cast<int64_t>(indptr.size()) - 1;
  if (indptr[0] != 0) {
    error = "indptr.npy: indptr[0] is " + std::to_string(indptr[0]) + ", not 0";
    return false;
  }
  for (int64_t v = 0; v < V; ++v)
    if (indptr[v + 1] < indptr[v]) {
      error = "indptr.npy: not monotone (indptr[" + std::to_string(v + 1) +
              "] < indptr[" + std::to_string(v) + "])";
      return false;
    }
  if (indptr[V] != numEdges) {
    error = "indptr.npy: indptr[-1] = " + std::to_string(indptr[V]) +
            " but indices.npy has " + std::to_string(numEdges) + " edges";
    return false;
  }
  return true;
}

bool checkLabels(const std::vector<int64_t> &labels, int64_t numClasses,
                 std::string &error) {
  for (int64_t label : labels)
    if (label < -1 || label >= numClasses) {
      // Report like the Python validator: the smallest bad one below -1, else
      // the largest.
      const auto [mn, mx] = std::minmax_element(labels.begin(), labels.end());
      error = "labels.npy: label " + std::to_string(*mn < -1 ? *mn : *mx) +
              " outside [-1, num_classes=" + std::to_string(numClasses) + ")";
      return false;
    }
  return true;
}

bool checkLength(const std::string &file, int64_t actual, int64_t want,
                 const char *what, std::string &error) {
  if (actual == want)
    return true;
  error = file + ": length " + std::to_string(actual) + " but " + what +
          " is " + std::to_string(want);
  return false;
}

bool readDatasetMeta(const std::string &dir, Dataset &ds, int64_t metaCounts[4],
                     std::vector<std::string> &edgeNames, std::string &error) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = dir + ": not a directory";
    return false;
  }
  // meta.json
  std::string metaText;
  if (!readRegularFile(datasetFile(dir, "meta.json"), "meta.json", metaText,
                       error))
    return false;
  JsonValue meta;
  std::string jerr;
  if (!parseJson(metaText, meta, jerr)) {
    error = "meta.json: not valid JSON (" + jerr + ")";
    return false;
  }
  if (meta.kind != JsonValue::Object) {
    error = "meta.json: expected a JSON object";
    return false;
  }
  static const char *keys[] = {
      "format_version", "name",     "num_vertices", "num_edges", "num_features",
      "num_classes",    "directed", "self_loops",   "source",    "edge_data"};
  for (const char *k : keys)
    if (!meta.get(k)) {
      error = std::string("meta.json: missing key '") + k + "'";
      return false;
    }
  const JsonValue *version = meta.get("format_version");
  if (version->kind != JsonValue::Int || version->i != 1) {
    error = "meta.json: format_version " + version->text() +
            " (this reader knows 1)";
    return false;
  }
  const char *countKeys[] = {"num_vertices", "num_edges", "num_features",
                             "num_classes"};
  for (int i = 0; i < 4; ++i) {
    const JsonValue *v = meta.get(countKeys[i]);
    if (v->kind != JsonValue::Int || v->i < 0) {
      error = std::string("meta.json: '") + countKeys[i] +
              "' must be a non-negative integer";
      return false;
    }
    metaCounts[i] = v->i;
  }
  if (metaCounts[3] < 1) {
    error = "meta.json: 'num_classes' must be at least 1";
    return false;
  }
  for (int i = 0; i < 4; ++i)
    if (metaCounts[i] > kCountLimits[i].max) {
      error = std::string("meta.json: '") + kCountLimits[i].key + "' is " +
              std::to_string(metaCounts[i]) + ", more than " +
              std::to_string(kCountLimits[i].max) + " (" + kCountLimits[i].why +
              ")";
      return false;
    }
  for (const char *k : {"name", "source"})
    if (meta.get(k)->kind != JsonValue::String) {
      error = std::string("meta.json: '") + k + "' must be a string";
      return false;
    }
  for (const char *k : {"directed", "self_loops"})
    if (meta.get(k)->kind != JsonValue::Bool) {
      error = std::string("meta.json: '") + k + "' must be true or false";
      return false;
    }
  const JsonValue *names = meta.get("edge_data");
  if (names->kind != JsonValue::Array) {
    error = "meta.json: 'edge_data' must be a list of names";
    return false;
  }
  for (const JsonValue &n : names->items)
    if (n.kind != JsonValue::String) {
      error = "meta.json: 'edge_data' must be a list of names";
      return false;
    }
  std::set<std::string> seen;
  edgeNames.clear();
  for (size_t i = 0; i < names->items.size(); ++i) {
    const std::string &n = names->items[i].s;
    if (!isEdgeDataName(n)) {
      error = "meta.json: 'edge_data' item " + std::to_string(i) +
              " is not a name of letters, digits and '_'";
      return false;
    }
    if (!seen.insert(n).second) {
      error = "meta.json: 'edge_data' lists '" + n + "' twice";
      return false;
    }
    edgeNames.push_back(n);
  }
  ds.name = meta.get("name")->text();
  ds.source = meta.get("source")->text();
  ds.directed = meta.get("directed")->b;
  ds.selfLoops = meta.get("self_loops")->b;
  ds.numClasses = metaCounts[3];
  return true;
}

bool loadGraph(const std::string &dir, Dataset &ds, std::string &error) {
  NpyHeader h;
  if (!readNpy(datasetFile(dir, "indptr.npy"), "indptr.npy", DType::I64, 1, h,
               ds.indptr, error))
    return false;
  if (!readNpy(datasetFile(dir, "indices.npy"), "indices.npy", DType::I32, 1, h,
               ds.indices, error))
    return false;
  if (!checkIndptr(ds.indptr, static_cast<int64_t>(ds.indices.size()), error))
    return false;
  const int64_t V = static_cast<int64_t>(ds.indptr.size()) - 1;
  const int64_t E = static_cast<int64_t>(ds.indices.size());
  ds.numVertices = V;
  ds.numEdges = E;
  int64_t lo = 0, hi = 0;
  for (int64_t e = 0; e < E; ++e) {
    lo = std::min<int64_t>(lo, ds.indices[e]);
    hi = std::max<int64_t>(hi, ds.indices[e]);
  }
  if (E && (lo < 0 || hi >= V)) {
    error = "indices.npy: vertex id " + std::to_string(lo < 0 ? lo : hi) +
            " out of range [0, " + std::to_string(V) + ")";
    return false;
  }
  for (int64_t v = 0; v < V; ++v)
    for (int64_t e = ds.indptr[v] + 1; e < ds.indptr[v + 1]; ++e)
      if (ds.indices[e] < ds.indices[e - 1]) {
        error =
            "indices.npy: sources not ascending within a destination (edge " +
            std::to_string(e) + ")";
        return false;
      }
  return true;
}

bool loadGraphOnStorage(const std::string &dir, Dataset &ds,
                        IndicesOnStorage &out, std::string &error) {
  NpyHeader h;
  if (!readNpy(datasetFile(dir, "indptr.npy"), "indptr.npy", DType::I64, 1, h,
               ds.indptr, error))
    return false;
  const std::string path = datasetFile(dir, "indices.npy");
  std::vector<int32_t> block;
  // An empty range checks the header, dtype and rank as readNpy does.
  if (!readNpyRows(path, "indices.npy", DType::I32, 1, NpyRange(), h, block,
                   error))
    return false;
  const int64_t E = h.shape[0];
  if (!checkIndptr(ds.indptr, E, error))
    return false;
  const int64_t V = static_cast<int64_t>(ds.indptr.size()) - 1;
  ds.numVertices = V;
  ds.numEdges = E;
  out.fd = openRegularFile(path, "indices.npy", error);
  if (out.fd < 0)
    return false;
  rememberCachedFile(out.fd); // --uncached-reads: dropped before each epoch
  out.offset = static_cast<int64_t>(h.dataOffset);
  out.srcOffsets.assign(V + 1, 0);
  // Blocks of 16 MiB: ids in range, ascending within a destination (the
  // destination and the edge before carried across blocks).
  constexpr int64_t kBlockEdges = int64_t(4) << 20;
  int64_t v = 0;
  int32_t previous = 0;
  for (int64_t first = 0; first < E; first += kBlockEdges) {
    NpyRange range;
    range.begin = first;
    range.end = std::min(E, first + kBlockEdges);
    if (!readNpyRows(path, "indices.npy", DType::I32, 1, range, h, block,
                     error))
      return false;
    for (int64_t e = first; e < range.end; ++e) {
      while (ds.indptr[v + 1] <= e)
        ++v;
      const int32_t u = block[e - first];
      if (u < 0 || u >= V) {
        error = "indices.npy: vertex id " + std::to_string(u) +
                " out of range [0, " + std::to_string(V) + ")";
        return false;
      }
      if (e > ds.indptr[v] && u < previous) {
        error = "indices.npy: sources not ascending within a destination "
                "(edge " +
                std::to_string(e) + ")";
        return false;
      }
      previous = u;
      ++out.srcOffsets[u + 1];
    }
  }
  for (int64_t u = 0; u < V; ++u)
    out.srcOffsets[u + 1] += out.srcOffsets[u];
  return true;
}

IndicesOnStorage::~IndicesOnStorage() {
  forgetCachedFile(fd);
  if (fd >= 0)
    ::close(fd);
}

/// Reads `bytes` at `offset` of `fd` into `out`, retrying short reads.
static bool readFully(int fd, const std::string &name, char *out, int64_t bytes,
                      int64_t offset, int64_t row, std::string &error) {
  while (bytes > 0) {
    const ssize_t got = ::pread(fd, out, static_cast<size_t>(bytes),
                                static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      error = name + ": reading row " + std::to_string(row) + ": " +
              std::strerror(errno);
      return false;
    }
    if (got == 0) {
      error = name + ": the file ends before row " + std::to_string(row) +
              " (it changed while training)";
      return false;
    }
    out += got;
    offset += got;
    bytes -= got;
  }
  return true;
}

bool readStoredRows(const FeaturesOnStorage &file, int64_t width,
                    const std::vector<int64_t> &vertices, float *out,
                    StoredReads &counts, std::string &error) {
  return readStoredRows(file.fd, file.offset, file.name, width, vertices, out,
                        counts, error);
}

bool readStoredRows(int fd, int64_t offset, const std::string &name,
                    int64_t width, const std::vector<int64_t> &vertices,
                    float *out, StoredReads &counts, std::string &error) {
  const int64_t n = static_cast<int64_t>(vertices.size());
  const int64_t rowBytes = width * static_cast<int64_t>(sizeof(float));
  if (n == 0 || rowBytes == 0)
    return true;
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return vertices[a] < vertices[b]; });
  // A run of rows at most a page apart is one read (the page is read in
  // any case), of at most 1 MiB.
  constexpr int64_t kGapBytes = 4096, kMostBytes = int64_t(1) << 20;
  std::vector<char> run;
  for (int64_t k = 0; k < n;) {
    const int64_t first = vertices[order[k]];
    int64_t last = first, m = k + 1;
    while (m < n && (vertices[order[m]] - last - 1) * rowBytes <= kGapBytes &&
           (vertices[order[m]] - first + 1) * rowBytes <= kMostBytes)
      last = vertices[order[m++]];
    const int64_t bytes = (last - first + 1) * rowBytes;
    const int64_t at = offset + first * rowBytes;
    ++counts.reads;
    counts.bytes += bytes;
    if (m == k + 1) {
      if (!readFully(fd, name, reinterpret_cast<char *>(out + order[k] * width),
                     bytes, at, first, error))
        return false;
    } else {
      run.resize(static_cast<size_t>(bytes));
      if (!readFully(fd, name, run.data(), bytes, at, first, error))
        return false;
      for (int64_t j = k; j < m; ++j)
        std::memcpy(out + order[j] * width,
                    run.data() + (vertices[order[j]] - first) * rowBytes,
                    static_cast<size_t>(rowBytes));
    }
    k = m;
  }
  return true;
}

FeaturesOnStorage::~FeaturesOnStorage() {
  forgetCachedFile(fd);
  if (fd >= 0)
    ::close(fd);
}

bool checkFeaturesFinite(const std::vector<float> &values, int64_t firstRow,
                         int64_t width, std::string &error) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i])) {
      error = "features.npy: NaN or Inf (row " +
              std::to_string(firstRow + static_cast<int64_t>(i) /
                                            std::max<int64_t>(width, 1)) +
              ")";
      return false;
    }
  return true;
}

bool openFeaturesOnStorage(const std::string &dir, int64_t V,
                           int64_t &numFeatures, FeaturesOnStorage &out,
                           std::string &error) {
  const std::string path = datasetFile(dir, "features.npy");
  NpyHeader h;
  std::vector<float> block;
  // An empty range checks the header, dtype and rank as readNpy does.
  if (!readNpyRows(path, "features.npy", DType::F32, 2, NpyRange(), h, block,
                   error) ||
      !checkLength("features.npy", h.shape[0], V,
                   "the number of vertices (indptr.npy)", error))
    return false;
  numFeatures = h.shape[1];
  out.fd = openRegularFile(path, "features.npy", error);
  if (out.fd < 0)
    return false;
  rememberCachedFile(out.fd); // --uncached-reads: dropped before each epoch
  out.offset = static_cast<int64_t>(h.dataOffset);
  return true;
}

/// Checks features.npy of `dir` (float32 [V, F], C order, every value
/// finite) by reading it in blocks of rows, and keeps it open in `out`.
static bool checkFeaturesOnStorage(const std::string &dir, int64_t V,
                                   Dataset &ds, FeaturesOnStorage &out,
                                   std::string &error) {
  if (!openFeaturesOnStorage(dir, V, ds.numFeatures, out, error))
    return false;
  const std::string path = datasetFile(dir, "features.npy");
  NpyHeader h;
  std::vector<float> block;
  // Blocks of 16 MiB.
  const int64_t F = ds.numFeatures;
  const int64_t rowsPerBlock =
      std::max<int64_t>(1, (int64_t(4) << 20) / std::max<int64_t>(F, 1));
  for (int64_t row = 0; row < V; row += rowsPerBlock) {
    NpyRange range;
    range.begin = row;
    range.end = std::min(V, row + rowsPerBlock);
    if (!readNpyRows(path, "features.npy", DType::F32, 2, range, h, block,
                     error) ||
        !checkFeaturesFinite(block, row, F, error))
      return false;
  }
  return true;
}

bool loadDataset(const std::string &dir, Dataset &ds, std::string &error,
                 FeaturesOnStorage *onStorage, IndicesOnStorage *indices) {
  int64_t metaCounts[4];
  std::vector<std::string> edgeNames;
  if (!readDatasetMeta(dir, ds, metaCounts, edgeNames, error))
    return false;
  struct stat st;
  NpyHeader h;
  // Graph.
  if (indices ? !loadGraphOnStorage(dir, ds, *indices, error)
              : !loadGraph(dir, ds, error))
    return false;
  const int64_t V = ds.numVertices;
  const int64_t E = ds.numEdges;

  // Vertex data.
  if (onStorage) {
    if (!checkFeaturesOnStorage(dir, V, ds, *onStorage, error))
      return false;
  } else {
    if (!readNpy(datasetFile(dir, "features.npy"), "features.npy", DType::F32,
                 2, h, ds.features, error))
      return false;
    if (!checkLength("features.npy", h.shape[0], V,
                     "the number of vertices (indptr.npy)", error))
      return false;
    ds.numFeatures = h.shape[1];
    if (!checkFeaturesFinite(ds.features, 0, ds.numFeatures, error))
      return false;
  }
  if (!readNpy(datasetFile(dir, "labels.npy"), "labels.npy", DType::I64, 1, h,
               ds.labels, error))
    return false;
  if (!checkLength("labels.npy", h.shape[0], V,
                   "the number of vertices (indptr.npy)", error))
    return false;
  if (!checkLabels(ds.labels, ds.numClasses, error))
    return false;
  const char *splits[] = {"train", "val", "test"};
  for (int s = 0; s < 3; ++s) {
    std::string file = std::string(splits[s]) + "_mask.npy";
    if (!readNpy(datasetFile(dir, file), file, DType::Bool, 1, h, ds.masks[s],
                 error))
      return false;
    if (!checkLength(file, h.shape[0], V, "the number of vertices (indptr.npy)",
                     error))
      return false;
  }

  // Edge data.
  for (const std::string &edgeName : edgeNames) {
    std::string file = "edge_" + edgeName + ".npy";
    std::string path = datasetFile(dir, file);
    if (stat(path.c_str(), &st) != 0 && errno == ENOENT) {
      error = file + ": missing file (listed in meta.json edge_data)";
      return false;
    }
    // Read into the vector of its dtype (the header first says which).
    if (!readNpyHeader(path, file, h, error))
      return false;
    EdgeData ed;
    std::vector<char> other;
    if (!(h.dtype == DType::I32
              ? readNpy(path, file, DType::I32, -1, h, ed.i32, error)
          : h.dtype == DType::F32
              ? readNpy(path, file, DType::F32, -1, h, ed.f32, error)
              : readNpy(path, file, h.dtype, -1, h, other, error)))
      return false;
    if (h.dtype == DType::I32) {
      if (h.shape.size() != 1) {
        error = file + ": rank " + std::to_string(h.shape.size()) + " (shape " +
                shapeText(h.shape) + ") but 1 expected";
        return false;
      }
      ed.isInt = true;
    } else if (h.dtype == DType::F32) {
      if (h.shape.size() != 1 && h.shape.size() != 2) {
        error = file + ": rank " + std::to_string(h.shape.size()) + " (shape " +
                shapeText(h.shape) + ") but [E] or [E, k] expected";
        return false;
      }
      ed.width = h.shape.size() == 2 ? h.shape[1] : 1;
      for (float x : ed.f32)
        if (!std::isfinite(x)) {
          error = file + ": NaN or Inf";
          return false;
        }
    } else {
      error = file + ": dtype " + dtypeName(h.dtype) +
              " but float32 or int32 expected";
      return false;
    }
    if (!checkLength(file, h.shape[0], E, "the number of edges (indices.npy)",
                     error))
      return false;
    ds.edgeData[edgeName] = std::move(ed);
  }

  const int64_t actual[3] = {V, E, ds.numFeatures};
  // The blocks read above (the checks of what stays on storage, the npy
  // reads) are freed, but glibc keeps freed heap: give it back, so that the
  // driver's memory check, which counts the resident memory, sees only the
  // dataset.
#ifdef __GLIBC__
  malloc_trim(0);
#endif
  return checkMetaCounts(metaCounts, actual, error);
}

bool checkMetaCounts(const int64_t metaCounts[4], const int64_t actual[3],
                     std::string &error) {
  const char *countKeys[] = {"num_vertices", "num_edges", "num_features"};
  for (int i = 0; i < 3; ++i)
    if (metaCounts[i] != actual[i]) {
      error = std::string("meta.json: ") + countKeys[i] + " is " +
              std::to_string(metaCounts[i]) + " but the arrays have " +
              std::to_string(actual[i]);
      return false;
    }
  return true;
}

std::map<std::string, EdgeData>
selectEdgeData(const std::map<std::string, EdgeData> &all,
               const std::vector<int64_t> &edges) {
  std::map<std::string, EdgeData> selected;
  for (const auto &[name, data] : all) {
    EdgeData &d = selected[name];
    d.isInt = data.isInt;
    d.width = data.width;
    for (int64_t e : edges) {
      if (data.isInt)
        d.i32.push_back(data.i32[e]);
      else
        d.f32.insert(d.f32.end(), data.f32.begin() + e * data.width,
                     data.f32.begin() + (e + 1) * data.width);
    }
  }
  return selected;
}

bool writeDataset(const Dataset &ds, const std::string &dir,
                  std::string &error) {
  if (!makeDirectories(dir, error))
    return false;
  const int64_t V = ds.numVertices, E = ds.numEdges, F = ds.numFeatures;
  std::string edgeNames;
  for (const auto &[name, data] : ds.edgeData)
    edgeNames += (edgeNames.empty() ? "" : ", ") + jsonString(name);
  const std::string meta =
      "{\n  \"format_version\": 1,\n  \"name\": " + jsonString(ds.name) +
      ",\n  \"num_vertices\": " + std::to_string(V) +
      ",\n  \"num_edges\": " + std::to_string(E) +
      ",\n  \"num_features\": " + std::to_string(F) +
      ",\n  \"num_classes\": " + std::to_string(ds.numClasses) +
      ",\n  \"directed\": " + (ds.directed ? "true" : "false") +
      ",\n  \"self_loops\": " + (ds.selfLoops ? "true" : "false") +
      ",\n  \"source\": " + jsonString(ds.source) + ",\n  \"edge_data\": [" +
      edgeNames + "]\n}\n";
  if (!writeWholeFile(dir + "/meta.json", {{meta.data(), meta.size()}}, error))
    return false;
  auto file = [&](const char *name) { return datasetFile(dir, name); };
  if (!writeNpy(file("indptr.npy"), DType::I64, {V + 1}, ds.indptr.data(),
                error) ||
      !writeNpy(file("indices.npy"), DType::I32, {E}, ds.indices.data(),
                error) ||
      !writeNpy(file("features.npy"), DType::F32, {V, F}, ds.features.data(),
                error) ||
      !writeNpy(file("labels.npy"), DType::I64, {V}, ds.labels.data(), error))
    return false;
  const char *splits[] = {"train", "val", "test"};
  for (int s = 0; s < 3; ++s)
    if (!writeNpy(datasetFile(dir, std::string(splits[s]) + "_mask.npy"),
                  DType::Bool, {V}, ds.masks[s].data(), error))
      return false;
  for (const auto &[name, data] : ds.edgeData) {
    std::vector<int64_t> shape{E};
    if (!data.isInt && data.width != 1)
      shape.push_back(data.width);
    if (!writeNpy(datasetFile(dir, "edge_" + name + ".npy"),
                  data.isInt ? DType::I32 : DType::F32, shape,
                  data.isInt ? static_cast<const void *>(data.i32.data())
                             : static_cast<const void *>(data.f32.data()),
                  error))
      return false;
  }
  return true;
}

int64_t labelledTrainVertices(const Dataset &ds, int64_t &selected) {
  int64_t labelled = 0;
  selected = 0;
  for (int64_t v = 0; v < ds.numVertices; ++v) {
    if (!ds.masks[0][v])
      continue;
    ++selected;
    labelled += ds.labels[v] >= 0;
  }
  return labelled;
}

} // namespace gnnrt
