//===- ModelInfo.cpp - the model description gnn-compile writes -----------===//
//
// parseModelInfo: the `gnnrt_model_info` text of a compiled program, one
// record a line (docs/ProgramContract.md, "The model description"), into a
// ModelInfo; a malformed record is refused with its line number.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace gnnrt {

bool parseModelInfo(const std::string &text, ModelInfo &info,
                    std::string &error) {
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  int64_t evalLevels = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::istringstream ls(line);
    std::string kind;
    if (!(ls >> kind))
      continue;
    auto bad = [&](const std::string &what) {
      error = "model info line " + std::to_string(lineno) + ": " + what;
      return false;
    };
    if (kind == "model") {
      ls >> info.name;
    } else if (kind == "param") {
      ParamInfo p;
      int64_t rank;
      if (!(ls >> p.name >> p.init >> p.value >> rank) || rank < 0 || rank > 8)
        return bad("malformed param record");
      for (int64_t i = 0; i < rank; ++i) {
        int64_t d;
        if (!(ls >> d) || d == 0 || d < -2)
          return bad("malformed param dimension");
        p.dims.push_back(d);
      }
      info.params.push_back(std::move(p));
    } else if (kind == "edge") {
      EdgeInputInfo e;
      std::string type;
      if (!(ls >> e.name >> type >> e.width) ||
          (type != "f32" && type != "i32"))
        return bad("malformed edge record");
      e.isInt = type == "i32";
      info.edgeInputs.push_back(e);
    } else if (kind == "features") {
      if (!(ls >> info.featureWidth))
        return bad("malformed features record");
    } else if (kind == "classes") {
      if (!(ls >> info.classWidth))
        return bad("malformed classes record");
    } else if (kind == "buffer" || kind == "eval-buffer" ||
               kind == "level-buffer" || kind == "cut") {
      BufferInfo b;
      std::string terms;
      int64_t level = 0;
      if (kind == "level-buffer" &&
          (!(ls >> level) || level < 1 ||
           level > static_cast<int64_t>(info.levels.size())))
        return bad("level-buffer of a level with no level record");
      if (!(ls >> b.slot >> b.factor >> terms) || b.slot < 0 || b.factor < 0)
        return bad("malformed " + kind + " record");
      if (terms == "?") {
        b.unknown = true;
      } else if (terms != "1") {
        std::istringstream ts(terms);
        std::string t;
        while (std::getline(ts, t, '*')) {
          static const char *names = "VEFC";
          if (t == "S" || t == "W") {
            b.terms.push_back({t == "S" ? BufferInfo::S : BufferInfo::W, 1});
            continue;
          }
          if (t.size() == 1 && std::strchr(names, t[0])) {
            b.terms.push_back(
                {static_cast<BufferInfo::Term>(std::strchr(names, t[0]) - names),
                 1});
            continue;
          }
          char *end = nullptr;
          long long k = t.size() > 2 && t.compare(0, 2, "V/") == 0
                            ? std::strtoll(t.c_str() + 2, &end, 10)
                            : 0;
          if (k <= 0 || !end || *end)
            return bad("malformed " + kind + " size");
          b.terms.push_back({BufferInfo::VChunks, k});
        }
      }
      if (kind == "cut") {
        const bool rowWidth =
            !b.unknown && b.factor >= 1 && b.factor <= (int64_t{1} << 24) &&
            std::all_of(b.terms.begin(), b.terms.end(), [](const auto &t) {
              return t.first == BufferInfo::F || t.first == BufferInfo::C;
            });
        if (!rowWidth || !info.cutWidths.emplace(b.slot, b).second)
          return bad("malformed cut record (a row width is 1 to 2^24 times "
                     "F and C terms, once per cut)");
      } else if (kind == "level-buffer") {
        info.levels[level - 1].buffers.push_back(std::move(b));
      } else if (kind == "buffer") {
        info.buffers.push_back(std::move(b));
      } else {
        info.evalBuffersKnown = true;
        info.evalBuffers.push_back(std::move(b));
      }
    } else if (kind == "eval-levels") {
      if (!(ls >> evalLevels) || evalLevels < 1 || evalLevels > 4096)
        return bad("malformed eval-levels record");
    } else if (kind == "level") {
      int64_t l = 0, n = 0;
      ModelInfo::Level level;
      if (!(ls >> l) || l != static_cast<int64_t>(info.levels.size()) + 1 ||
          l > evalLevels)
        return bad("level record out of order (levels 1 to eval-levels)");
      for (std::vector<int64_t> *cuts : {&level.inputs, &level.outputs}) {
        if (!(ls >> n) || n < 0 || n > 4096)
          return bad("malformed level record");
        cuts->resize(n);
        for (int64_t &k : *cuts)
          if (!(ls >> k) || k < 0 || k > (int64_t{1} << 20))
            return bad("malformed level record");
      }
      info.levels.push_back(std::move(level));
    } else if (kind == "graph-arrays") {
      unsigned mask = 0;
      if (!(ls >> mask) || mask > 0xF || !(mask & 1))
        return bad("malformed graph-arrays record");
      info.graphArrays = mask;
    } else if (kind == "eval-graph-arrays") {
      unsigned mask = 0;
      if (!(ls >> mask) || mask > 0xF || !(mask & 1))
        return bad("malformed eval-graph-arrays record");
      info.evalGraphArrays = mask;
    } else if (kind == "hops") {
      if (!(ls >> info.hops) || info.hops < -1 ||
          (info.hops == -1 && !(ls >> info.globalOp)))
        return bad("malformed hops record");
    } else if (kind == "collective") {
      ModelInfo::RowCollective c;
      std::string terms;
      if (!(ls >> c.function >> c.kind >> c.factor >> terms) ||
          (c.function != "train" && c.function != "eval") ||
          (c.kind != "allgather" && c.kind != "broadcast" &&
           c.kind != "reduce_scatter" && c.kind != "reduce") ||
          c.factor < 0)
        return bad("malformed collective record");
      if (terms != "1") {
        std::istringstream ts(terms);
        std::string t;
        while (std::getline(ts, t, '*')) {
          if (t != "F" && t != "C")
            return bad("malformed collective width");
          c.terms.push_back(t == "F" ? BufferInfo::F : BufferInfo::C);
        }
      }
      info.rowCollectives.push_back(std::move(c));
    } else if (kind == "partition") {
      if (!(ls >> info.partition) ||
          (info.partition != "rows" && info.partition != "features"))
        return bad("malformed partition record");
    } else if (kind == "replicated") {
      int features = -1;
      if (!(ls >> features) || (features != 0 && features != 1))
        return bad("malformed replicated record");
      info.replicated = true;
      info.replicatedFeatures = features == 1;
    } else if (kind == "features-out-of-core") {
      int chunks = 0;
      if (!(ls >> chunks) || chunks < 1 || chunks > 4096)
        return bad("malformed features-out-of-core record");
      info.featureChunks = chunks;
    } else if (kind == "graph-out-of-core") {
      int chunks = 0;
      if (!(ls >> chunks) || chunks < 1 || chunks > 4096)
        return bad("malformed graph-out-of-core record");
      info.graphChunks = chunks;
    } else if (kind == "row-chunks") {
      int chunks = 0;
      if (!(ls >> chunks) || chunks < 2 || chunks > 4096)
        return bad("malformed row-chunks record");
      info.rowChunks = chunks;
    } else if (kind == "target") {
      if (!(ls >> info.target) || info.target != "cuda")
        return bad("malformed target record");
    } else if (kind == "edge-chunks") {
      int64_t chunks = 0;
      if (!(ls >> chunks) || chunks < 1 || chunks > 4096)
        return bad("malformed edge-chunks record");
      info.edgeChunks.assign(chunks, 0);
      for (int64_t &edges : info.edgeChunks)
        if (!(ls >> edges) || edges < 0)
          return bad("malformed edge-chunks record");
    } else if (kind == "placement") {
      PlacementInfo p;
      int planned = -1;
      if (!(ls >> p.function >> planned >> p.peak >> p.V >> p.E >> p.F >>
            p.C) ||
          (p.function != "train" && p.function != "eval") ||
          (planned != 0 && planned != 1) || p.peak < 0)
        return bad("malformed placement record");
      p.planned = planned == 1;
      info.placements.push_back(p);
    } else {
      return bad("unknown record");
    }
  }
  if (evalLevels != static_cast<int64_t>(info.levels.size())) {
    error = "model info: eval-levels " + std::to_string(evalLevels) +
            " with " + std::to_string(info.levels.size()) + " level records";
    return false;
  }
  // Each cut is left by one level below the last, with its width, and
  // read only above it.
  std::map<int64_t, size_t> leftBy;
  for (size_t l = 0; l < info.levels.size(); ++l)
    for (int64_t k : info.levels[l].outputs)
      if (l + 1 == info.levels.size() || !info.cutWidths.count(k) ||
          !leftBy.emplace(k, l).second) {
        error = "model info: level " + std::to_string(l + 1) + " leaves cut " +
                std::to_string(k) +
                " (the last level leaves none; each cut is left once, with a "
                "cut record)";
        return false;
      }
  for (size_t l = 0; l < info.levels.size(); ++l)
    for (int64_t k : info.levels[l].inputs) {
      bool left = false;
      for (size_t below = 0; below < l; ++below)
        for (int64_t out : info.levels[below].outputs)
          left |= out == k;
      if (!left || !info.cutWidths.count(k)) {
        error = "model info: level " + std::to_string(l + 1) + " reads cut " +
                std::to_string(k) +
                ", which no lower level leaves with a width";
        return false;
      }
    }
  if (info.replicated && info.partition != "rows") {
    error = "model info: a 'replicated' record without 'partition rows'";
    return false;
  }
  if (info.evalGraphArrays & ~info.graphArrays) {
    error = "model info: the eval-graph-arrays record names an array the "
            "graph-arrays record does not";
    return false;
  }
  return true;
}

} // namespace gnnrt
