//===- OnnxChecker.h - The ONNX checker's rules at import -------*- C++ -*-===//
//
// Part of MegaGraph. The structural rules of the ONNX specification that the
// importer enforces before it reads a model, so that a malformed file fails
// with a message instead of importing as something other than what it says:
// every node agrees with its op's schema (attribute names and types, the
// number of inputs and outputs), every tensor has one writer, graph inputs
// and initializers agree, and the model states its IR version.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_LIB_IMPORT_ONNX_ONNXCHECKER_H
#define MEGAGRAPH_LIB_IMPORT_ONNX_ONNXCHECKER_H

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <string>

namespace megagraph::onnx_import {

/// Checks the model-level rules: a set ir_version, graph inputs and
/// initializers each named once, a graph input that is also an initializer
/// of the initializer's type and shape, and every tensor written by one node
/// at most (and never by a node when it is a graph input or initializer).
/// Nodes must be named already. Returns the first problem, or "".
std::string checkModelStructure(const onnx::ModelProto &model);

/// Checks `node`, an ai.onnx node, against its op's schema at `opset`:
/// each attribute known to the op, given once and of the schema's type;
/// required attributes present; the numbers of inputs and outputs within
/// the schema's bounds. Ops without a schema at `opset` pass (the importer
/// reports them as unsupported). Returns the first problem, or "".
std::string checkNodeSchema(const onnx::NodeProto &node, int64_t opset);

} // namespace megagraph::onnx_import

#endif // MEGAGRAPH_LIB_IMPORT_ONNX_ONNXCHECKER_H
