//===- GraphBatches.cpp - Training batches of a graph data set ------------===//
//
// See GraphBatches.h.
//
//===----------------------------------------------------------------------===//

#include "driver/GraphBatches.h"

#include "data/GraphUtil.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace mgrt {
namespace {

/// Stores integer `v` at element i of an i64 or i32 tensor.
inline void storeInt(const mgrt_tensor &t, int64_t i, int64_t v) {
  if (t.dtype == MGRT_I64)
    static_cast<int64_t *>(t.data)[i] = v;
  else
    static_cast<int32_t *>(t.data)[i] = static_cast<int32_t>(v);
}

} // namespace

bool checkFeatureIds(const mgrt_tensor_info &in, int64_t numFeatures,
                     const Options &opts, std::string &error) {
  const int64_t rows = mgrt_index_bound(&in);
  if (in.role != MGRT_ROLE_NODE_FEATURES || rows < 1 || numFeatures < 1)
    return true;
  const int64_t V = opts.categories;
  if (numFeatures <= (rows - 1) / V)
    return true;
  const int64_t fits = (rows - 1) / numFeatures;
  error =
      "--categories " + std::to_string(V) + " gives the " +
      std::to_string(numFeatures) + " feature columns of input '" + in.name +
      "' ids up to " + std::to_string(numFeatures * V) +
      " (1 + f * V + bin), but its embedding table has " +
      std::to_string(rows) + " rows" +
      (fits >= 1 ? "; pass --categories " + std::to_string(fits) + " or less"
                 : "; too few for " + std::to_string(numFeatures) + " columns");
  return false;
}

GraphBatches::GraphBatches(const GraphData &data,
                           const std::vector<int64_t> &order,
                           std::vector<uint8_t> isTrain,
                           std::vector<uint8_t> isEval,
                           std::vector<mgrt_tensor_role> roles,
                           const BatchLayout &layout, const Options &opts,
                           const mgrt_tensor_info *inputs)
    : data(data), order(order), isTrain(std::move(isTrain)),
      isEval(std::move(isEval)), roles(std::move(roles)), layout(layout),
      numSeq(data.numNodes() / layout.S),
      perEpoch(numSeq / (layout.B * layout.replicas)), seed(opts.seed),
      maxDistance(opts.maxDistance), bins(data.features, opts.categories),
      maxId(this->roles.size(), -1), epochOrder(numSeq),
      pos(data.numNodes(), -1) {
  for (size_t i = 0; inputs && i < maxId.size(); ++i)
    if (const int64_t rows = mgrt_index_bound(&inputs[i]); rows > 0)
      maxId[i] = rows - 1;
}

bool GraphBatches::fill(long step, std::vector<mgrt_tensor> &inputs,
                        BatchCounts &counts, std::string &error) {
  const int64_t B = layout.B, S = layout.S, R = layout.rows,
                first = layout.first, F = data.numFeatures();
  // The block's rows; rows [V, R) are padding (uneven cp blocks).
  const int64_t V = layout.valid >= 0 ? std::min(layout.valid, R) : R;
  const int64_t globalB = B * layout.replicas;
  // Which sequences.
  const int64_t e = step / perEpoch, k = step % perEpoch;
  if (e != epoch) {
    epoch = e;
    for (int64_t i = 0; i < numSeq; ++i)
      epochOrder[i] = i;
    shuffleSeeded(epochOrder, mixSeed(seed, 0x65706f6368ULL /* "epoch" */,
                                      static_cast<uint64_t>(e)));
  }
  const int64_t *inDeg = static_cast<const int64_t *>(data.inDegree.data);
  const int64_t *outDeg = static_cast<const int64_t *>(data.outDegree.data);
  const int64_t *labels = static_cast<const int64_t *>(data.labels.data);
  const float *feats = static_cast<const float *>(data.features.data);
  char err[512];
  counts = BatchCounts{};
  counts.epoch = epoch;
  for (int64_t b = 0; b < B; ++b) {
    // The sequence, and this rank's rows [first, first + R) of it.
    const int64_t *seq =
        order.data() + epochOrder[k * globalB + layout.replica * B + b] * S;
    const int64_t *nodes = seq + first;
    for (int64_t s = 0; s < V; ++s)
      counts.counted += isTrain[nodes[s]],
          counts.evalCounted += isEval[nodes[s]];
    for (size_t i = 0; i < inputs.size(); ++i) {
      const mgrt_tensor &t = inputs[i];
      const int64_t base = b * R; // row (b, 0) in node units
      if (V < R) { // padding: zeros (no label, no feature, distance 0)
        const int64_t perRow = mgrt_tensor_numel(&t) / (B * R);
        const size_t bytes = mgrt_dtype_size(t.dtype);
        std::memset(static_cast<char *>(t.data) + (base + V) * perRow * bytes,
                    0, (R - V) * perRow * bytes);
      }
      switch (roles[i]) {
      case MGRT_ROLE_NODE_FEATURES:
        if (t.dtype == MGRT_I64) {
          for (int64_t s = 0; s < V; ++s)
            for (int64_t f = 0; f < F; ++f)
              storeInt(t, (base + s) * F + f,
                       bins.id(f, feats[nodes[s] * F + f]));
          break;
        }
        for (int64_t s = 0; s < V && F > 0; ++s)
          std::memcpy(static_cast<float *>(t.data) + (base + s) * F,
                      feats + nodes[s] * F, F * sizeof(float));
        break;
      case MGRT_ROLE_IN_DEGREE:
      case MGRT_ROLE_OUT_DEGREE:
      case MGRT_ROLE_LABELS: {
        const int64_t *src = roles[i] == MGRT_ROLE_IN_DEGREE    ? inDeg
                             : roles[i] == MGRT_ROLE_OUT_DEGREE ? outDeg
                                                                : labels;
        // Unlabelled nodes (-1, never in a mask) get class 0; degrees are
        // capped at the table's last row.
        const int64_t cap = maxId[i] >= 0 ? maxId[i] : INT64_MAX;
        for (int64_t s = 0; s < V; ++s)
          storeInt(t, base + s,
                   std::min(cap, std::max<int64_t>(0, src[nodes[s]])));
        break;
      }
      case MGRT_ROLE_LABEL_MASK:
        for (int64_t s = 0; s < V; ++s)
          static_cast<uint8_t *>(t.data)[base + s] = isTrain[nodes[s]];
        break;
      case MGRT_ROLE_EVAL_MASK:
        for (int64_t s = 0; s < V; ++s)
          static_cast<float *>(t.data)[base + s] = isEval[nodes[s]];
        break;
      case MGRT_ROLE_SPD: {
        int64_t *out = static_cast<int64_t *>(t.data) + base * S;
        if (t.dtype != MGRT_I64) {
          spdTmp.resize(V * S);
          out = spdTmp.data();
        }
        // Distances past the table's last row share it (unreachable pairs
        // included).
        const long cap = maxId[i] >= 0 && maxId[i] < maxDistance
                             ? static_cast<long>(maxId[i])
                             : maxDistance;
        if (mgrt_spd_block(&data.graph, seq, S, first, first + V, cap, out, err,
                           sizeof err) != MGRT_OK) {
          error = std::string("spd: ") + err;
          return false;
        }
        if (t.dtype != MGRT_I64)
          for (int64_t j = 0; j < V * S; ++j)
            storeInt(t, base * S + j, out[j]);
        break;
      }
      case MGRT_ROLE_ADJ_NORM:
        normalizedAdjacency(data.graph, nodes, S, pos,
                            static_cast<float *>(t.data) + base * S);
        break;
      default: // checked by the loop: every input has a node role
        break;
      }
    }
  }
  return true;
}

} // namespace mgrt
