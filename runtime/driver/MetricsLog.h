//===- MetricsLog.h - The training loop's step log --------------*- C++ -*-===//
//
// Internal to the runtime. What the training loop reports per step and at
// the end: the console step line and summary (stdout), and the --log-json
// line, one JSON object per step written through JsonWriter
// (support/Json.h). The keys, in order (Train.h documents their meaning):
//   step, loss, accuracy, test_accuracy, step_time_s
// and for graph data sets (not --data npy:)
//   peak_bytes, base_bytes, comm_bytes, [state_bytes], [device_peak_bytes],
//   [compute_s,
//   compute_cpu_s], tokens_per_s, epoch
// Non-finite numbers (an accuracy without counted items) are null.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_METRICSLOG_H
#define MEGAGRAPH_RUNTIME_DRIVER_METRICSLOG_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace mgrt {

/// One step's figures.
struct StepMetrics {
  long step = 0; ///< from 1
  double loss = 0, accuracy = 0, testAccuracy = 0, stepSeconds = 0;
  /// The graph data sets' figures (memory, throughput, epoch).
  bool hasMemory = false;
  size_t localPeakBytes = 0;                ///< this rank's, for the console
  std::vector<size_t> peakBytes, baseBytes; ///< per rank
  std::vector<size_t> commBytes; ///< per rank: sent in the step (Comm.h)
  /// per rank: the model state it holds (heldStateBytes, StateLayout.h)
  std::vector<size_t> stateBytes;
  /// pipelined, per rank: the schedule's buffers held across steps
  /// (Pipeline::heldBytes), part of base_bytes
  std::vector<size_t> scheduleBytes;
  bool hasDevicePeaks = false;
  std::vector<size_t> devicePeakBytes; ///< per rank (--target cuda)
  bool hasCompute = false;             ///< pipelined: seconds per rank
  std::vector<double> computeSeconds, computeCpuSeconds;
  double tokensPerSecond = 0;
  int64_t epoch = 0;
};

/// An evaluation pass (--mode eval, --eval-every): the forward over the
/// batches of a split, no update.
struct EvalMetrics {
  long step = 0;     ///< training steps done before it
  std::string split; ///< "test" or "train"
  long batches = 0;
  double loss = 0;     ///< mean over the counted nodes of all batches
  double accuracy = 0; ///< correct / counted (NaN without `correct`)
  int64_t counted = 0;
};

/// The run's figures for the summary line.
struct RunSummary {
  const char *modelName = "model";
  bool failed = false;
  long steps = 0;
  double lastLoss = 0, lastAccuracy = 0, totalSeconds = 0;
  /// Graph data sets: pooled test accuracy, throughput and memory.
  bool hasMemory = false;
  double pooledCorrect = 0, pooledCounted = 0;
  size_t pooledSteps = 0;
  double tokensPerStep = 0;
  size_t maxPeakBytes = 0;
};

class MetricsLog {
public:
  MetricsLog() = default;
  MetricsLog(const MetricsLog &) = delete;
  MetricsLog &operator=(const MetricsLog &) = delete;
  ~MetricsLog();

  /// Opens `path` for appending; false with `error` naming the flag.
  bool open(const std::string &path, std::string &error);
  bool isOpen() const { return file != nullptr; }

  /// Appends the step's JSON line and flushes; false with `error`.
  bool write(const StepMetrics &m, std::string &error);

  /// Appends the evaluation's JSON line
  ///   {"eval_step":t,"split":S,"batches":n,"loss":L,"accuracy":A,
  ///    "nodes":N}
  /// and flushes; false with `error`.
  bool write(const EvalMetrics &e, std::string &error);
  /// "eval after step t: test split, n batch(es), N nodes, loss L, acc A".
  static std::string evalLine(const EvalMetrics &e);

  /// The step's JSON object, without the newline.
  static std::string jsonLine(const StepMetrics &m);
  /// "step t/K  loss L  acc A[  test T]  S s[  peak P MiB]".
  static std::string stepLine(const StepMetrics &m, long totalSteps);
  /// "<model>: train ok, N step(s), final loss ...".
  static std::string summaryLine(const RunSummary &s);

private:
  std::string path;
  FILE *file = nullptr;
};

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_METRICSLOG_H
