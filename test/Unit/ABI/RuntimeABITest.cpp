//===- RuntimeABITest.cpp - RuntimeCalls.def against GNNRuntime.h ---------===//
//
// The lowering declares runtime entry points from the table in
// gnn/Conversion/GNNToRuntime/RuntimeCalls.def. Here every line of the table
// is checked against the header's prototype at compile time (a mismatch does
// not build), and the header's list of entry points against the table's.
//
//===----------------------------------------------------------------------===//

#include "gnnrt/GNNRuntime.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>

namespace {

// The table's types, and the C types they stand for.
struct Void {};
struct Ctx {};
struct I64 {};
struct U64 {};
struct F32 {};
struct F64 {};
struct MemF32 {};
struct MemI32 {};
struct MemI64 {};
struct Kernel {};

template <typename T>
struct CType;
template <>
struct CType<Void> {
  using type = void;
};
template <>
struct CType<Ctx> {
  using type = gnnrtContext *;
};
template <>
struct CType<I64> {
  using type = int64_t;
};
template <>
struct CType<U64> {
  using type = uint64_t;
};
template <>
struct CType<F32> {
  using type = float;
};
template <>
struct CType<F64> {
  using type = double;
};
template <>
struct CType<MemF32> {
  using type = gnnrtMemRefF32 *;
};
template <>
struct CType<MemI32> {
  using type = gnnrtMemRefI32 *;
};
template <>
struct CType<MemI64> {
  using type = gnnrtMemRefI64 *;
};
template <>
struct CType<Kernel> {
  using type = void (*)(gnnrtContext *, int64_t, int64_t);
};

template <typename T>
constexpr bool isMemRef =
    std::is_same_v<T, MemF32> || std::is_same_v<T, MemI32> ||
    std::is_same_v<T, MemI64>;

/// The C prototype of a plain entry point: R(A...).
template <typename R, typename Args>
struct CSignature;
template <typename R, typename... A>
struct CSignature<R, std::tuple<A...>> {
  static_assert(!(isMemRef<A> || ...) && !isMemRef<R>,
                "memref operands need the C interface (M)");
  using type = typename CType<R>::type (*)(typename CType<A>::type...);
};

/// The C prototype of an `llvm.emit_c_interface` entry point: memrefs by
/// pointer, a memref result through a first pointer argument.
template <typename R, typename Args, bool = isMemRef<R>>
struct MSignature;
template <typename R, typename... A>
struct MSignature<R, std::tuple<A...>, false> {
  using type = typename CType<R>::type (*)(typename CType<A>::type...);
};
template <typename R, typename... A>
struct MSignature<R, std::tuple<A...>, true> {
  using type = void (*)(typename CType<R>::type, typename CType<A>::type...);
};

#define GNNRT_UNPAREN(...) __VA_ARGS__
#define GNNRT_SYMBOL_C(Name) Name
#define GNNRT_SYMBOL_M(Name) _mlir_ciface_##Name
#define GNNRT_CALL(Name, Interface, Result, Args)                              \
  static_assert(                                                               \
      std::is_same_v<                                                          \
          decltype(&GNNRT_SYMBOL_##Interface(Name)),                           \
          Interface##Signature<Result, std::tuple<GNNRT_UNPAREN Args>>::type>, \
      "RuntimeCalls.def: " #Name " does not match GNNRuntime.h");
#include "gnn/Conversion/GNNToRuntime/RuntimeCalls.def"

const char *const tableNames[] = {
#define GNNRT_CALL(Name, ...) #Name,
#include "gnn/Conversion/GNNToRuntime/RuntimeCalls.def"
};

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

// Every entry point the header exports has a line in the table, and every
// line names one of them (the static_asserts above check the types).
TEST(RuntimeABI, TableListsEveryEntryPoint) {
  std::string header = readFile(GNNRT_HEADER);
  ASSERT_FALSE(header.empty()) << "cannot read " << GNNRT_HEADER;
  std::set<std::string> exported;
  std::regex decl(R"(GNNRT_EXPORT[^;(]*?\b(?:_mlir_ciface_)?(gnnrt\w+)\s*\()");
  for (auto it = std::sregex_iterator(header.begin(), header.end(), decl);
       it != std::sregex_iterator(); ++it)
    exported.insert((*it)[1]);
  std::set<std::string> table(std::begin(tableNames), std::end(tableNames));
  EXPECT_GT(exported.size(), 30u);
  for (const std::string &name : exported)
    EXPECT_TRUE(table.count(name)) << name << " is missing in RuntimeCalls.def";
  for (const std::string &name : table)
    EXPECT_TRUE(exported.count(name))
        << name << " is in RuntimeCalls.def but not in GNNRuntime.h";
  EXPECT_EQ(table.size(), std::size(tableNames)) << "a name appears twice";
}
