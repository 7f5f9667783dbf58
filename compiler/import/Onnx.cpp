// ONNX import (what it reads and how: Onnx.h; the user's view: docs/onnx.md):
// the model file reader and the parameters of host ops. The importer, its
// op table (OnnxConverters.cpp) and the entry points (OnnxImporter.cpp) are
// declared in OnnxImporter.h.
#include "compiler/import/Onnx.h"

#include "compiler/import/OnnxOpsets.h"
#include "compiler/import/OnnxPatterns.h"
#include "compiler/import/OnnxTensor.h"
#include "compiler/ir/Verifier.h"
#include "host/HostOp.h"
#include "support/FileIO.h"
#include "support/HostMemory.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <set>

namespace spyre::compiler {

namespace {

/// The parameter inputs of host ops, by position, under the attribute
/// names the host library reads (host/HostOp.h).
struct HostParams {
  std::string_view opType;
  std::array<std::string_view, 5> names;
};
constexpr HostParams kHostParams[] = {
    {"Clip", {"", "min", "max"}},
    {"CumSum", {"", "axis"}},
    {"Expand", {"", "shape"}},
    {"Gather", {"", "indices"}},
    {"Pad", {"", "pads", "constant_value"}},
    {"Slice", {"", "starts", "ends", "axes", "steps"}},
    {"Tile", {"", "repeats"}},
};

} // namespace

std::string hostParamName(std::string_view opType, int index) {
  for (const HostParams &p : kHostParams)
    if (p.opType == opType && index >= 0 &&
        static_cast<size_t>(index) < p.names.size())
      return std::string(p.names[static_cast<size_t>(index)]);
  return "";
}

bool isHostParamInput(std::string_view opType, int index) {
  return !hostParamName(opType, index).empty();
}

namespace {

namespace pbio = google::protobuf::io;
using google::protobuf::internal::WireFormatLite;

/// One field of a message read from `in`, through a CodedInputStream of its
/// own: protobuf counts a stream's bytes in an int, so no single stream may
/// read a whole model above 2 GiB, but each of its parts is smaller.
class FieldReader {
public:
  explicit FieldReader(pbio::ZeroCopyInputStream &in) : coded_(&in) {
    coded_.SetTotalBytesLimit(std::numeric_limits<int>::max());
  }
  pbio::CodedInputStream &coded() { return coded_; }
  /// Bytes read so far (the tag, a length, the field).
  uint64_t used() const {
    return static_cast<uint64_t>(coded_.CurrentPosition());
  }

private:
  pbio::CodedInputStream coded_;
};

/// Appends the field of `tag`, read from `r`, to `rest` as it was encoded.
bool copyField(FieldReader &r, uint32_t tag, std::string &rest) {
  pbio::StringOutputStream sink(&rest);
  pbio::CodedOutputStream out(&sink);
  return WireFormatLite::SkipField(&r.coded(), tag, &out);
}

/// The repeated message field of GraphProto that `field` numbers, or
/// nullptr for the others (name, doc_string), which are copied.
google::protobuf::MessageLite *graphEntry(onnx::GraphProto &g, int field) {
  switch (field) {
  case onnx::GraphProto::kNodeFieldNumber:
    return g.add_node();
  case onnx::GraphProto::kInitializerFieldNumber:
    return g.add_initializer();
  case onnx::GraphProto::kSparseInitializerFieldNumber:
    return g.add_sparse_initializer();
  case onnx::GraphProto::kInputFieldNumber:
    return g.add_input();
  case onnx::GraphProto::kOutputFieldNumber:
    return g.add_output();
  case onnx::GraphProto::kValueInfoFieldNumber:
    return g.add_value_info();
  case onnx::GraphProto::kQuantizationAnnotationFieldNumber:
    return g.add_quantization_annotation();
  default:
    return nullptr;
  }
}

/// The `length` bytes of a GraphProto, entry by entry: each node and
/// initializer is parsed on its own, so the graph may exceed 2 GiB as long
/// as each of them does not.
bool parseGraph(pbio::ZeroCopyInputStream &in, uint64_t length,
                onnx::GraphProto &graph) {
  std::string rest;
  while (length > 0) {
    FieldReader r(in);
    const uint32_t tag = r.coded().ReadTag();
    if (tag == 0)
      return false;
    google::protobuf::MessageLite *entry = nullptr;
    if (WireFormatLite::GetTagWireType(tag) ==
        WireFormatLite::WIRETYPE_LENGTH_DELIMITED)
      entry = graphEntry(graph, WireFormatLite::GetTagFieldNumber(tag));
    if (entry) {
      uint32_t size = 0;
      if (!r.coded().ReadVarint32(&size) ||
          size > static_cast<uint32_t>(std::numeric_limits<int>::max() - 16))
        return false;
      pbio::CodedInputStream::Limit limit =
          r.coded().PushLimit(static_cast<int>(size));
      if (!entry->MergePartialFromCodedStream(&r.coded()) ||
          !r.coded().ConsumedEntireMessage())
        return false;
      r.coded().PopLimit(limit);
    } else if (!copyField(r, tag, rest)) {
      return false;
    }
    if (r.used() > length)
      return false;
    length -= r.used();
  }
  return graph.MergeFromString(rest);
}

/// A ModelProto from `in`, its graph through parseGraph.
bool parseModel(pbio::ZeroCopyInputStream &in, onnx::ModelProto &model) {
  std::string rest;
  for (;;) {
    uint64_t graphLength = 0;
    {
      FieldReader r(in);
      const uint32_t tag = r.coded().ReadTag();
      if (tag == 0)
        return r.coded().ConsumedEntireMessage() &&
               model.MergeFromString(rest);
      const bool graph = WireFormatLite::GetTagFieldNumber(tag) ==
                             onnx::ModelProto::kGraphFieldNumber &&
                         WireFormatLite::GetTagWireType(tag) ==
                             WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
      if (!graph) {
        if (!copyField(r, tag, rest))
          return false;
        continue;
      }
      if (!r.coded().ReadVarint64(&graphLength))
        return false;
    } // the reader gives back what it buffered beyond the length
    if (!parseGraph(in, graphLength, *model.mutable_graph()))
      return false;
  }
}

} // namespace

bool readOnnxModel(const std::string &path, onnx::ModelProto &model,
                   DiagnosticEngine &diags) {
  std::optional<uint64_t> size;
  try {
    size = checkInputFile(path, kOnnxFileLimit);
  } catch (const UserError &e) {
    diags.report(e.diagnostic());
    return false;
  }
  if (size && *size == 0) {
    diags.error(SourceLoc{path}, "the file is empty; expected an ONNX model");
    return false;
  }
  // The parsed model holds about the file's bytes.
  try {
    HostMemoryEstimate need;
    need.add("the model", size.value_or(0));
    checkHostMemory(need, physicalMemoryBytes(), SourceLoc{path});
  } catch (const UserError &e) {
    diags.report(e.diagnostic());
    return false;
  }
  // Parsed from the file as a stream, part by part: the file's bytes are
  // not held in a buffer beside the message they become, and a model above
  // protobuf's 2 GiB message limit reads as long as each node and
  // initializer is below it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    diags.error(SourceLoc{path},
                std::string("cannot open file: ") + std::strerror(errno));
    return false;
  }
  pbio::FileInputStream file(fd);
  file.SetCloseOnDelete(true);
  const bool parsed = parseModel(file, model);
  if (file.GetErrno() != 0) {
    diags.error(SourceLoc{path},
                std::string("read error: ") + std::strerror(file.GetErrno()));
    return false;
  }
  if (!parsed) {
    diags.error(SourceLoc{path},
                "not an ONNX model: the file does not parse as an ONNX "
                "ModelProto (protobuf)");
    return false;
  }
  return true;
}


} // namespace spyre::compiler
