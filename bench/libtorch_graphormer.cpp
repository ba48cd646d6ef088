//===- libtorch_graphormer.cpp - LibTorch baseline of the Graphormer bench ===//
//
// The Graphormer-style model of examples/models/graphormer.py (exported at
// benchmark sizes by bench/graphormer_bench.py), written with LibTorch's C++
// tensor ops, op for op as the PyTorch module runs it in eager mode. It loads
// the same weights (params/<state_dict name>.npy) and inputs
// (inputs/<name>.npy) from a work directory, runs the forward under
// torch::NoGradGuard with at::set_num_threads(T), checks the output against
// PyTorch's (outputs/logits.npy), times N repeats after a warm-up and
// reports the peak RSS (getrusage).
//
//   megagraph-bench-libtorch --model-dir DIR [--repeat N] [--warmup W]
//                            [--threads T] [--output-dir OUT]
//
// Sizes (D, H, layers, classes) are read off the weight shapes. The summary
// line (stdout) is:
//   libtorch: infer ok, N run(s), mean X ms, min Y ms, max abs err E,
//   peak RSS R MiB (after load L MiB)
//
//===----------------------------------------------------------------------===//

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

//===-- A tiny .npy reader / writer (little-endian, C order) --------------===//

/// Reads a .npy file of float32 ('<f4') or int64 ('<i8') into a tensor.
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

/// Writes a float32 tensor as a version 1.0 .npy file.
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

//===-- The model ---------------------------------------------------------===//

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

class Graphormer {
public:
  explicit Graphormer(const std::string &dir) {
    auto param = [&](const std::string &name) {
      return readNpy(dir + "/params/" + name + ".npy");
    };
    auto linear = [&](const std::string &name) {
      return Linear{param(name + ".weight"), param(name + ".bias")};
    };
    auto norm = [&](const std::string &name) {
      return LayerNorm{param(name + ".weight"), param(name + ".bias")};
    };
    atom = param("atom_encoder.weight");
    inDegree = param("in_degree_encoder.weight");
    outDegree = param("out_degree_encoder.weight");
    spatial = param("spatial_pos_encoder.weight");
    for (int i = 0;; ++i) {
      const std::string p = "layers." + std::to_string(i) + ".";
      if (!exists(dir + "/params/" + p + "attn_norm.weight.npy"))
        break;
      layers.push_back(
          Layer{norm(p + "attn_norm"), norm(p + "ffn_norm"),
                linear(p + "attn.q_proj"), linear(p + "attn.k_proj"),
                linear(p + "attn.v_proj"), linear(p + "attn.out_proj"),
                linear(p + "ffn.0"), linear(p + "ffn.2")});
    }
    finalNorm = norm("final_norm");
    head = linear("head");
    dim = atom.size(1);
    heads = spatial.size(1);
    if (layers.empty() || dim % heads != 0)
      throw std::runtime_error(dir + ": unexpected parameters");
  }

  /// examples/models/graphormer.py: Graphormer.forward.
  at::Tensor forward(const at::Tensor &x, const at::Tensor &inDeg,
                     const at::Tensor &outDeg, const at::Tensor &spd) const {
    at::Tensor h = at::embedding(atom, x).sum(-2); // [B,S,D]
    h = h + at::embedding(inDegree, inDeg) + at::embedding(outDegree, outDeg);
    at::Tensor attnBias =
        at::embedding(spatial, spd).permute({0, 3, 1, 2}); // [B,H,S,S]
    for (const Layer &layer : layers) {
      h = h + attention(layer, layer.attnNorm(h), attnBias);
      h = h + layer.ffn2(at::gelu(layer.ffn0(layer.ffnNorm(h))));
    }
    return head(finalNorm(h)); // [B,S,C]
  }

  int64_t dim = 0, heads = 0;
  size_t numLayers() const { return layers.size(); }
  int64_t numClasses() const { return head.weight.size(0); }

private:
  /// MultiHeadSelfAttention.forward.
  at::Tensor attention(const Layer &l, const at::Tensor &x,
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

  at::Tensor atom, inDegree, outDegree, spatial;
  std::vector<Layer> layers;
  LayerNorm finalNorm;
  Linear head;
};

//===-- Command line ------------------------------------------------------===//

struct Options {
  std::string modelDir, outputDir;
  long repeat = 5, warmup = 1;
  int threads = 2;
};

[[noreturn]] void usage(const char *prog, const std::string &error) {
  if (!error.empty())
    std::fprintf(stderr, "error: %s\n", error.c_str());
  std::fprintf(stderr,
               "usage: %s --model-dir DIR [--repeat N] [--warmup W] "
               "[--threads T] [--output-dir OUT]\n"
               "  DIR as written by bench/graphormer_bench.py: params/, "
               "inputs/, outputs/logits.npy\n",
               prog);
  std::exit(error.empty() ? 0 : 1);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage(argv[0], a + " needs a value");
      return argv[++i];
    };
    if (a == "--model-dir")
      o.modelDir = value();
    else if (a == "--output-dir")
      o.outputDir = value();
    else if (a == "--repeat")
      o.repeat = std::stol(value());
    else if (a == "--warmup")
      o.warmup = std::stol(value());
    else if (a == "--threads")
      o.threads = std::stoi(value());
    else if (a == "--help" || a == "-h")
      usage(argv[0], "");
    else
      usage(argv[0], "unknown argument '" + a + "'");
  }
  if (o.modelDir.empty())
    usage(argv[0], "--model-dir DIR is required");
  if (o.repeat < 1 || o.warmup < 0 || o.threads < 1)
    usage(argv[0], "--repeat >= 1, --warmup >= 0, --threads >= 1");
  return o;
}

int run(const Options &o) {
  at::set_num_threads(o.threads);
  torch::NoGradGuard noGrad;

  Graphormer model(o.modelDir);
  const std::string in = o.modelDir + "/inputs/";
  const at::Tensor x = readNpy(in + "x.npy");
  const at::Tensor inDeg = readNpy(in + "in_degree.npy");
  const at::Tensor outDeg = readNpy(in + "out_degree.npy");
  const at::Tensor spd = readNpy(in + "spd.npy");
  const at::Tensor want = readNpy(o.modelDir + "/outputs/logits.npy");
  const double loadedMiB = maxRssMiB();
  std::fprintf(stderr,
               "libtorch %s: B=%ld S=%ld D=%ld H=%ld layers=%zu classes=%ld, "
               "%d intra-op thread(s)\n",
               TORCH_VERSION, long(x.size(0)), long(x.size(1)), long(model.dim),
               long(model.heads), model.numLayers(), long(model.numClasses()),
               at::get_num_threads());

  at::Tensor out;
  for (long r = 0; r < o.warmup; ++r)
    out = model.forward(x, inDeg, outDeg, spd);
  out.reset();
  double totalMs = 0, minMs = 0;
  for (long r = 0; r < o.repeat; ++r) {
    out.reset(); // as the compiled model, do not hold two results at once
    auto start = std::chrono::steady_clock::now();
    out = model.forward(x, inDeg, outDeg, spd);
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    totalMs += ms;
    minMs = r == 0 || ms < minMs ? ms : minMs;
  }
  if (!out.sizes().equals(want.sizes())) {
    std::fprintf(stderr,
                 "error: output shape differs from outputs/logits.npy\n");
    return 1;
  }
  const double err = (out - want).abs().max().item<double>();
  if (!o.outputDir.empty()) {
    ::mkdir(o.outputDir.c_str(), 0777);
    writeNpy(o.outputDir + "/logits.npy", out);
  }
  std::printf("libtorch: infer ok, %ld run(s), mean %.3f ms, min %.3f ms, max "
              "abs err %.3e, peak RSS %.1f MiB (after load %.1f MiB)\n",
              o.repeat, totalMs / o.repeat, minMs, err, maxRssMiB(), loadedMiB);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  const Options o = parse(argc, argv);
  try {
    return run(o);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
