//===- gnnrt-validate.cpp - check a dataset with the runtime's loader -----===//

#include "Dataset.h"
#include "Memory.h"

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char **argv) {
  gnnrt::installOutOfMemoryHandler();
  if (argc != 2 || !std::strcmp(argv[1], "--help")) {
    std::fprintf(
        argc == 2 ? stdout : stderr,
        "usage: %s DATASET_DIR\nLoads a dataset with the gnnrt loader; "
        "prints 'ok' or a one-line error.\n",
        argv[0]);
    return argc == 2 ? 0 : 2;
  }
  gnnrt::Dataset ds;
  std::string error;
  if (!gnnrt::loadDataset(argv[1], ds, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  std::printf("%s: ok (%lld vertices, %lld edges)\n", argv[1],
              static_cast<long long>(ds.numVertices),
              static_cast<long long>(ds.numEdges));
  return 0;
}
