//===- libtorch_graphormer_model.h - LibTorch Graphormer of the benches ---===//
//
// Shared by the LibTorch baselines of the inference bench
// (libtorch_graphormer.cpp) and the training bench
// (libtorch_graphormer_train.cpp): a tiny .npy reader / writer, the process's
// peak RSS, and the Graphormer-style model of examples/models/graphormer.py
// (exported at benchmark sizes by bench/graphormer_bench.py) written with
// LibTorch's C++ tensor ops, op for op as the PyTorch module runs it in eager
// mode. Parameters come from a work directory's params/<state_dict name>.npy;
// sizes (D, H, layers, classes) are read off their shapes.
//
// Two node encoders, picked by which parameters the directory holds:
//   atom_encoder.weight   categorical features x [B,S,F] int64 -> Embedding,
//                         summed over F (BenchGraphormer, inference bench)
//   feat_encoder.weight   float features x [B,S,F] -> Linear
//                         (BenchGraphormerTrain, training bench)
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_BENCH_LIBTORCH_GRAPHORMER_MODEL_H
#define MEGAGRAPH_BENCH_LIBTORCH_GRAPHORMER_MODEL_H

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

namespace mgbench {

/// Reads a .npy file of float32 ('<f4') or int64 ('<i8') into a tensor.
at::Tensor readNpy(const std::string &path);

/// Writes a float32 tensor as a version 1.0 .npy file.
void writeNpy(const std::string &path, const at::Tensor &tensor);

/// Whether `path` exists.
bool exists(const std::string &path);

/// The process's peak resident set size so far, MiB (getrusage).
double maxRssMiB();

struct Linear {
  at::Tensor weight, bias;
  at::Tensor operator()(const at::Tensor &x) const {
    return at::linear(x, weight, bias);
  }
};

struct LayerNorm {
  at::Tensor weight, bias;
  at::Tensor operator()(const at::Tensor &x) const {
    return at::layer_norm(x, {weight.size(0)}, weight, bias, 1e-5);
  }
};

struct Layer {
  LayerNorm attnNorm, ffnNorm;
  Linear q, k, v, out, ffn0, ffn2;
};

/// examples/models/graphormer.py's Graphormer (eval mode: no dropout).
class Graphormer {
public:
  /// Loads DIR/params/*.npy; throws std::runtime_error on a missing file or
  /// unexpected shapes.
  explicit Graphormer(const std::string &dir);

  /// Graphormer.forward: logits [B,S,C].
  at::Tensor forward(const at::Tensor &x, const at::Tensor &inDeg,
                     const at::Tensor &outDeg, const at::Tensor &spd) const;

  /// Every parameter with its state_dict name, in a fixed order.
  std::vector<std::pair<std::string, at::Tensor>> namedParameters() const;

  int64_t dim = 0, heads = 0;
  bool floatFeatures() const { return featEncoder.weight.defined(); }
  size_t numLayers() const { return layers.size(); }
  int64_t numClasses() const { return head.weight.size(0); }
  /// Rows of the in/out-degree tables (valid degrees are below this).
  int64_t degreeTableSize() const { return inDegree.size(0); }

private:
  at::Tensor attention(const Layer &l, const at::Tensor &x,
                       const at::Tensor &attnBias) const;

  at::Tensor atom, inDegree, outDegree, spatial;
  Linear featEncoder;
  std::vector<Layer> layers;
  LayerNorm finalNorm;
  Linear head;
};

} // namespace mgbench

#endif // MEGAGRAPH_BENCH_LIBTORCH_GRAPHORMER_MODEL_H
