//===- Link.cpp - gnn-compile's objects to its output ---------------------===//
//
// Link.h: the objects written whole, combined (ld -r) or linked with the
// runtime's archives into an executable by the C++ compiler driver.
//
//===----------------------------------------------------------------------===//

#include "Link.h"

#include "gnn/Support/OutputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

using namespace mlir;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::StringRef;

static int fail(const std::string &message) {
  llvm::errs() << "gnn-compile: error: " << message << "\n";
  return 1;
}

/// libgnnrt.a and libgnnrt_main.a: bin/../lib next to this executable.
static std::string runtimeDir(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&runtimeDir));
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(dir, "..", "lib");
  return std::string(dir);
}

/// The C++ compiler driver on PATH, which links (and combines objects).
static std::optional<std::string> compilerDriver() {
  llvm::ErrorOr<std::string> cxx = llvm::sys::findProgramByName("c++");
  if (!cxx)
    return std::nullopt;
  return *cxx;
}

/// Runs `args` (args[0] the program), failing with `what` and the reason.
static int runTool(const std::vector<std::string> &args, StringRef what) {
  std::vector<StringRef> refs(args.begin(), args.end());
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(args[0], refs, std::nullopt, {}, 0, 0,
                                     &message);
  if (rc != 0)
    return fail(what.str() + " failed (" + std::to_string(rc) + ")" +
                (message.empty() ? "" : ": " + message));
  return 0;
}

static int link(const char *argv0, ArrayRef<std::string> objects,
                StringRef output, bool cuda) {
  std::string lib = runtimeDir(argv0);
  std::string rt = lib + "/libgnnrt.a", rtMain = lib + "/libgnnrt_main.a",
              rtCuda = lib + "/libgnnrt_cuda.a",
              rtMPI = lib + "/libgnnrt_mpi.a";
  std::vector<std::string> archives = {rtMain};
  if (cuda)
    archives.push_back(rtCuda);
  // Where gnnc was built with MPI, every executable can run under mpirun
  // (docs/Distributed.md); alone it never initialises MPI.
  const bool mpi = StringRef(GNNRT_MPI_LINK_FLAGS).size() > 0;
  if (mpi)
    archives.push_back(rtMPI);
  archives.push_back(rt);
  for (const std::string &a : archives)
    if (!llvm::sys::fs::exists(a))
      return fail("runtime library " + a +
                  " not found (is gnnc installed "
                  "completely?)");
  std::optional<std::string> cxx = compilerDriver();
  if (!cxx)
    return fail("no C++ compiler driver 'c++' on PATH to link the executable");
  std::vector<std::string> args = {*cxx};
  llvm::append_range(args, objects);
  llvm::append_range(args, archives);
  llvm::SmallVector<StringRef> flags;
  if (cuda)
    StringRef(GNNRT_CUDA_LINK_FLAGS).split(flags, ' ', -1, false);
  if (mpi)
    StringRef(GNNRT_MPI_LINK_FLAGS).split(flags, ' ', -1, false);
  StringRef(GNNRT_LINK_FLAGS).split(flags, ' ', -1, false);
  for (StringRef f : flags)
    args.push_back(f.str());
  args.push_back("-o");
  args.push_back(output.str());
  return runTool(args, "linking");
}

int mlir::gnn::writeLinkedOutput(const char *argv0,
                                 ArrayRef<SmallVector<char, 0>> objectCode,
                                 const std::string &out, bool objectOnly,
                                 bool keepTemps, bool cuda) {
  std::string error;
  if (objectOnly && objectCode.size() == 1)
    return writeOutputFile(
               out, StringRef(objectCode[0].data(), objectCode[0].size()),
               error)
               ? 0
               : fail(error);

  // Written to temporary files (next to the output with --keep-temps).
  std::vector<std::string> objects;
  auto removeObjects = [&] {
    if (!keepTemps)
      for (const std::string &o : objects)
        llvm::sys::fs::remove(o);
  };
  for (size_t i = 0; i < objectCode.size(); ++i) {
    llvm::SmallString<128> object;
    if (keepTemps) {
      object = out + (i == 0 ? ".o" : "." + std::to_string(i) + ".o");
    } else if (std::error_code ec =
                   llvm::sys::fs::createTemporaryFile("gnnc", "o", object)) {
      removeObjects();
      return fail("cannot create a temporary file: " + ec.message());
    }
    objects.push_back(object.str().str());
    if (!writeOutputFile(object,
                         StringRef(objectCode[i].data(), objectCode[i].size()),
                         error)) {
      removeObjects();
      return fail(error);
    }
  }
  // The linker writes a temporary next to the output, which replaces it
  // only once written: an executable, or one object of the two (ld -r).
  // Standard output (-o -) gets the temporary's contents.
  std::string linked;
  int rc = 0;
  if (out == "-") {
    llvm::SmallString<128> made;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("gnnc-output", "", made))
      rc = fail("cannot create a temporary file: " + ec.message());
    linked = std::string(made);
  } else if (!temporaryOutputFor(out, linked, error)) {
    rc = fail(error);
  }
  if (rc == 0 && objectOnly) {
    std::optional<std::string> cxx = compilerDriver();
    if (!cxx) {
      rc = fail("no C++ compiler driver 'c++' on PATH to combine the "
                "objects");
    } else {
      std::vector<std::string> args = {*cxx, "-r", "-nostdlib"};
      llvm::append_range(args, objects);
      args.push_back("-o");
      args.push_back(linked);
      rc = runTool(args, "combining the objects");
    }
  } else if (rc == 0) {
    rc = link(argv0, objects, linked, cuda);
  }
  if (rc == 0 && out == "-") {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> made =
        llvm::MemoryBuffer::getFile(linked, /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false);
    if (!made)
      rc = fail(linked + ": " + made.getError().message());
    else if (!writeOutputFile(out, (*made)->getBuffer(), error))
      rc = fail(error);
  } else if (rc == 0 && !installOutputFile(linked, out, error)) {
    rc = fail(error);
  }
  if (!linked.empty())
    llvm::sys::fs::remove(linked);
  removeObjects();
  return rc;
}
