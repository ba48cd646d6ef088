//===- libtorch_graphormer_model.cpp - LibTorch Graphormer of the benches -===//
//
// See libtorch_graphormer_model.h.
//
//===----------------------------------------------------------------------===//

#include "libtorch_graphormer_model.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace mgbench {

at::Tensor readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot open " + path);
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw std::runtime_error(path + ": not a .npy file");
  uint32_t headerLen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    in.read(reinterpret_cast<char *>(b), 2);
    headerLen = b[0] | (b[1] << 8);
  } else {
    unsigned char b[4];
    in.read(reinterpret_cast<char *>(b), 4);
    headerLen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
  }
  std::string header(headerLen, '\0');
  if (!in.read(&header[0], headerLen))
    throw std::runtime_error(path + ": truncated header");
  auto field = [&](const char *key) {
    size_t p = header.find(key);
    if (p == std::string::npos)
      throw std::runtime_error(path + ": no " + key + " in header");
    p = header.find(':', p);
    return header.substr(p + 1);
  };
  std::string descr = field("'descr'");
  at::ScalarType type;
  if (descr.find("'<f4'") != std::string::npos)
    type = at::kFloat;
  else if (descr.find("'<i8'") != std::string::npos)
    type = at::kLong;
  else
    throw std::runtime_error(path + ": unsupported dtype " + descr);
  if (field("'fortran_order'").find("False") == std::string::npos)
    throw std::runtime_error(path + ": Fortran order is not supported");
  std::string shapeText = field("'shape'");
  shapeText = shapeText.substr(shapeText.find('(') + 1);
  shapeText = shapeText.substr(0, shapeText.find(')'));
  std::vector<int64_t> shape;
  for (size_t p = 0; p < shapeText.size();) {
    while (p < shapeText.size() && (shapeText[p] == ' ' || shapeText[p] == ','))
      ++p;
    if (p == shapeText.size())
      break;
    size_t used = 0;
    shape.push_back(std::stoll(shapeText.substr(p), &used));
    p += used;
  }
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(type));
  const std::streamsize bytes = t.numel() * t.element_size();
  if (!in.read(static_cast<char *>(t.data_ptr()), bytes))
    throw std::runtime_error(path + ": truncated data");
  return t;
}

void writeNpy(const std::string &path, const at::Tensor &tensor) {
  at::Tensor t = tensor.to(at::kFloat).contiguous();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int64_t d : t.sizes())
    header += std::to_string(d) + ", ";
  if (t.dim() > 0)
    header.resize(header.size() - (t.dim() == 1 ? 1 : 2));
  header += "), }";
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char lenBytes[2] = {static_cast<char>(len & 0xff),
                            static_cast<char>(len >> 8)};
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(lenBytes, 2);
  out.write(header.data(), header.size());
  out.write(static_cast<const char *>(t.data_ptr()), t.numel() * 4);
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

double maxRssMiB() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0; // KiB on Linux
}

Graphormer::Graphormer(const std::string &dir) {
  auto param = [&](const std::string &name) {
    return readNpy(dir + "/params/" + name + ".npy");
  };
  auto linear = [&](const std::string &name) {
    return Linear{param(name + ".weight"), param(name + ".bias")};
  };
  auto norm = [&](const std::string &name) {
    return LayerNorm{param(name + ".weight"), param(name + ".bias")};
  };
  if (exists(dir + "/params/feat_encoder.weight.npy"))
    featEncoder = linear("feat_encoder");
  else
    atom = param("atom_encoder.weight");
  inDegree = param("in_degree_encoder.weight");
  outDegree = param("out_degree_encoder.weight");
  spatial = param("spatial_pos_encoder.weight");
  for (int i = 0;; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    if (!exists(dir + "/params/" + p + "attn_norm.weight.npy"))
      break;
    layers.push_back(Layer{
        norm(p + "attn_norm"), norm(p + "ffn_norm"), linear(p + "attn.q_proj"),
        linear(p + "attn.k_proj"), linear(p + "attn.v_proj"),
        linear(p + "attn.out_proj"), linear(p + "ffn.0"), linear(p + "ffn.2")});
  }
  finalNorm = norm("final_norm");
  head = linear("head");
  dim = inDegree.size(1);
  heads = spatial.size(1);
  if (layers.empty() || dim % heads != 0)
    throw std::runtime_error(dir + ": unexpected parameters");
}

at::Tensor Graphormer::forward(const at::Tensor &x, const at::Tensor &inDeg,
                               const at::Tensor &outDeg,
                               const at::Tensor &spd) const {
  at::Tensor h = floatFeatures() ? featEncoder(x)                  // [B,S,D]
                                 : at::embedding(atom, x).sum(-2); // [B,S,D]
  h = h + at::embedding(inDegree, inDeg) + at::embedding(outDegree, outDeg);
  at::Tensor attnBias =
      at::embedding(spatial, spd).permute({0, 3, 1, 2}); // [B,H,S,S]
  for (const Layer &layer : layers) {
    h = h + attention(layer, layer.attnNorm(h), attnBias);
    h = h + layer.ffn2(at::gelu(layer.ffn0(layer.ffnNorm(h))));
  }
  return head(finalNorm(h)); // [B,S,C]
}

std::vector<std::pair<std::string, at::Tensor>>
Graphormer::namedParameters() const {
  std::vector<std::pair<std::string, at::Tensor>> ps;
  auto add = [&](const std::string &name, const at::Tensor &t) {
    ps.emplace_back(name, t);
  };
  auto addLinear = [&](const std::string &name, const Linear &l) {
    add(name + ".weight", l.weight);
    add(name + ".bias", l.bias);
  };
  auto addNorm = [&](const std::string &name, const LayerNorm &n) {
    add(name + ".weight", n.weight);
    add(name + ".bias", n.bias);
  };
  if (floatFeatures())
    addLinear("feat_encoder", featEncoder);
  else
    add("atom_encoder.weight", atom);
  add("in_degree_encoder.weight", inDegree);
  add("out_degree_encoder.weight", outDegree);
  add("spatial_pos_encoder.weight", spatial);
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    const Layer &l = layers[i];
    addNorm(p + "attn_norm", l.attnNorm);
    addLinear(p + "attn.q_proj", l.q);
    addLinear(p + "attn.k_proj", l.k);
    addLinear(p + "attn.v_proj", l.v);
    addLinear(p + "attn.out_proj", l.out);
    addNorm(p + "ffn_norm", l.ffnNorm);
    addLinear(p + "ffn.0", l.ffn0);
    addLinear(p + "ffn.2", l.ffn2);
  }
  addNorm("final_norm", finalNorm);
  addLinear("head", head);
  return ps;
}

/// MultiHeadSelfAttention.forward.
at::Tensor Graphormer::attention(const Layer &l, const at::Tensor &x,
                                 const at::Tensor &attnBias) const {
  const int64_t b = x.size(0), s = x.size(1), dh = dim / heads;
  at::Tensor q = l.q(x).view({b, s, heads, dh}).transpose(1, 2); // [B,H,S,dh]
  at::Tensor k = l.k(x).view({b, s, heads, dh}).transpose(1, 2);
  at::Tensor v = l.v(x).view({b, s, heads, dh}).transpose(1, 2);
  at::Tensor scores =
      at::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(dh)); // [B,H,S,S]
  scores = scores + attnBias;
  at::Tensor attn = scores.softmax(-1);
  at::Tensor out = at::matmul(attn, v).transpose(1, 2).reshape({b, s, dim});
  return l.out(out);
}

} // namespace mgbench
