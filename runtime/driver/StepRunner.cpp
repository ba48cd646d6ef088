//===- StepRunner.cpp - How a training step runs --------------------------===//
//
// See StepRunner.h.
//
//===----------------------------------------------------------------------===//

#include "driver/StepRunner.h"

#include "driver/Descriptor.h"
#include "driver/Pipeline.h"

// Defined when the program links the CUDA runtime (--target cuda).
extern "C" size_t mgrt_cuda_peak_bytes(void) __attribute__((weak));

namespace mgrt {
namespace {

class EntryRunner : public StepRunner {
public:
  explicit EntryRunner(const mgrt_model_info &model) : model(model) {}

  bool setup(std::string &error) {
    return setupDataParallel(model.plan, dp, error);
  }

  void bind(std::vector<mgrt_tensor> &inputs,
            std::vector<mgrt_tensor> &outputs) override {
    descriptors.clear();
    for (const mgrt_tensor &t : inputs)
      descriptors.push_back(descriptorOf(t));
    for (const mgrt_tensor &t : outputs)
      descriptors.push_back(descriptorOf(t));
    args.clear();
    for (std::vector<int64_t> &d : descriptors)
      args.push_back(d.data());
  }

  bool step(std::string &) override {
    model.entry(args.data());
    return true;
  }

  std::vector<size_t> gather(size_t v) const override {
    return gatherOverRanks(dp, v);
  }

  double sumOverReplicas(double v) const override {
    return dp.size > 1 ? sumOverRanks(dp, v) : v;
  }

  void addMetrics(StepMetrics &m) const override {
    // --target cuda programs: the GPU's peak (parameters, optimizer state
    // and the step's buffers), per rank.
    if (!mgrt_cuda_peak_bytes)
      return;
    m.hasDevicePeaks = true;
    m.devicePeakBytes = gather(mgrt_cuda_peak_bytes());
  }

private:
  const mgrt_model_info &model;
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void *> args;
};

class PipelineRunner : public StepRunner {
public:
  explicit PipelineRunner(const mgrt_model_info &model) : model(model) {}

  bool setup(std::string &error) {
    return setupPipeline(model, pipe, dp, error);
  }

  bool lead() const override { return dp.rank == 0 && pipe.stage == 0; }

  void bind(std::vector<mgrt_tensor> &in,
            std::vector<mgrt_tensor> &out) override {
    inputs = &in;
    outputs = &out;
  }

  bool step(std::string &error) override {
    return pipelineStep(pipe, model, *inputs, *outputs, error);
  }

  std::vector<size_t> gather(size_t v) const override {
    return pipelineGather(pipe, v);
  }

  double sumOverReplicas(double v) const override {
    return dp.size > 1 ? pipelineSumOverReplicas(pipe, v) : v;
  }

  void addMetrics(StepMetrics &m) const override {
    // Seconds (wall, process CPU) in stage entries per rank.
    m.hasCompute = true;
    m.computeSeconds = pipelineGatherSeconds(pipe, pipe.computeSeconds);
    m.computeCpuSeconds = pipelineGatherSeconds(pipe, pipe.computeCpuSeconds);
    m.scheduleBytes = pipelineGather(pipe, pipe.heldBytes);
  }

private:
  const mgrt_model_info &model;
  Pipeline pipe;
  std::vector<mgrt_tensor> *inputs = nullptr, *outputs = nullptr;
};

} // namespace

std::unique_ptr<StepRunner> makeStepRunner(const mgrt_model_info &model,
                                           std::string &error) {
  if (isPipelined(model)) {
    auto runner = std::make_unique<PipelineRunner>(model);
    if (!runner->setup(error))
      return nullptr;
    return runner;
  }
  auto runner = std::make_unique<EntryRunner>(model);
  if (!runner->setup(error))
    return nullptr;
  return runner;
}

std::unique_ptr<StepRunner>
makeSingleProcessRunner(const mgrt_model_info &model) {
  return std::make_unique<EntryRunner>(model);
}

} // namespace mgrt
