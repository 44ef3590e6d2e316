//===- Npy.h - checked .npy reading and writing -----------------*- C++ -*-===//
//
// The runtime is built without exceptions: every reader returns false and
// fills `error` with "<file>: <problem>". Sizes are checked against the file
// size before anything is allocated.
//
//===----------------------------------------------------------------------===//

#ifndef GNNRT_NPY_H
#define GNNRT_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace gnnrt {

enum class DType { F32, F64, I32, I64, Bool, U8, I16, Unknown };

const char *dtypeName(DType t);
size_t dtypeSize(DType t);

/// A shape as Python prints the tuple: (5, 3), (5,), ().
std::string shapeText(const std::vector<int64_t> &shape);

/// A parsed .npy header.
struct NpyHeader {
  DType dtype = DType::Unknown;
  std::vector<int64_t> shape;
  bool fortranOrder = false;
  size_t dataOffset = 0;
  int64_t numElements() const;
};

/// Reads and checks the header of `path` (magic, version, dictionary, that the
/// file holds the announced data). `name` is the file name used in messages.
/// Only a regular file is opened (File.h).
bool readNpyHeader(const std::string &path, const std::string &name,
                   NpyHeader &header, std::string &error);

/// Reads a whole array of the expected dtype (DType::Unknown: any the reader
/// knows) and rank (rank -1: any), opening `path` once. Before allocating,
/// the data's bytes are compared with the memory available (Memory.h):
/// "<name>: its data needs ... of memory but ... is available (...)".
/// `resize(target, bytes)` makes room for the data and returns where it goes.
bool readNpyInto(const std::string &path, const std::string &name,
                 DType expected, int rank, NpyHeader &header,
                 void *(*resize)(void *target, size_t bytes), void *target,
                 std::string &error);

/// The `resize` of a std::vector<T> target: room for `bytes` (a multiple of
/// T's size).
template <typename T>
void *resizeVector(void *target, size_t bytes) {
  auto &v = *static_cast<std::vector<T> *>(target);
  v.resize(bytes / sizeof(T));
  return v.data();
}

/// readNpyInto a vector of T (the dtype's size is a multiple of T's), read
/// in place: no second copy of the data.
template <typename T>
bool readNpy(const std::string &path, const std::string &name, DType expected,
             int rank, NpyHeader &header, std::vector<T> &data,
             std::string &error) {
  return readNpyInto(path, name, expected, rank, header, &resizeVector<T>,
                     &data, error);
}

/// Rows [begin, end) of an array's first axis and, within each row (the
/// remaining axes flattened), the elements [colBegin, colEnd) (colEnd -1:
/// to the row's end).
struct NpyRange {
  int64_t begin = 0, end = 0;
  int64_t colBegin = 0, colEnd = -1;
};

/// Reads `range` of an array of the expected dtype and rank (as
/// readNpyInto), C order, by ranged reads of the file: one read for whole
/// rows, one per row for a range of columns. What a process reads of the
/// dataset when it holds part of it (its vertices' rows; for a partition of
/// the features, its columns). A range outside the shape is an error naming
/// it and the shape; the memory check covers the range's bytes only.
bool readNpyRows(const std::string &path, const std::string &name,
                 DType expected, int rank, const NpyRange &range,
                 NpyHeader &header, void *(*resize)(void *target, size_t bytes),
                 void *target, std::string &error);

/// readNpyRows into a vector of T.
template <typename T>
bool readNpyRows(const std::string &path, const std::string &name,
                 DType expected, int rank, const NpyRange &range,
                 NpyHeader &header, std::vector<T> &data, std::string &error) {
  return readNpyRows(path, name, expected, rank, range, header,
                     &resizeVector<T>, &data, error);
}

/// Writes a C-order array, whole or not at all (File.h: writeWholeFile).
bool writeNpy(const std::string &path, DType dtype,
              const std::vector<int64_t> &shape, const void *data,
              std::string &error);

} // namespace gnnrt

#endif // GNNRT_NPY_H
