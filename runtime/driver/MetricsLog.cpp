//===- MetricsLog.cpp - The training loop's step log ----------------------===//

#include "driver/MetricsLog.h"

#include "support/Json.h"

#include <cerrno>
#include <cmath>
#include <cstring>

namespace mgrt {

MetricsLog::~MetricsLog() {
  if (file)
    std::fclose(file);
}

bool MetricsLog::open(const std::string &p, std::string &error) {
  path = p;
  file = std::fopen(path.c_str(), "a");
  if (!file) {
    error = "--log-json '" + path +
            "': cannot open for appending: " + std::strerror(errno);
    return false;
  }
  return true;
}

bool MetricsLog::write(const StepMetrics &m, std::string &error) {
  const std::string line = jsonLine(m) + "\n";
  if (std::fputs(line.c_str(), file) < 0 || std::fflush(file) != 0) {
    error = "--log-json '" + path + "': write failed: " + std::strerror(errno);
    return false;
  }
  return true;
}

std::string MetricsLog::jsonLine(const StepMetrics &m) {
  JsonWriter j;
  j.objectBegin()
      .attribute("step", static_cast<int64_t>(m.step))
      .attribute("loss", m.loss)
      .attribute("accuracy", m.accuracy)
      .attribute("test_accuracy", m.testAccuracy)
      .attribute("step_time_s", m.stepSeconds);
  if (m.hasMemory) {
    j.attributeArray("peak_bytes", m.peakBytes)
        .attributeArray("base_bytes", m.baseBytes)
        .attributeArray("comm_bytes", m.commBytes);
    if (m.hasDevicePeaks)
      j.attributeArray("device_peak_bytes", m.devicePeakBytes);
    if (m.hasCompute)
      j.attributeArray("compute_s", m.computeSeconds)
          .attributeArray("compute_cpu_s", m.computeCpuSeconds);
    j.attribute("tokens_per_s", m.tokensPerSecond).attribute("epoch", m.epoch);
  }
  j.objectEnd();
  return j.str();
}

std::string MetricsLog::stepLine(const StepMetrics &m, long totalSteps) {
  char accText[32] = "-", testText[32] = "", peakText[48] = "";
  if (std::isfinite(m.accuracy))
    std::snprintf(accText, sizeof accText, "%.3f", m.accuracy);
  if (std::isfinite(m.testAccuracy))
    std::snprintf(testText, sizeof testText, "  test %.3f", m.testAccuracy);
  if (m.hasMemory)
    std::snprintf(peakText, sizeof peakText, "  peak %.1f MiB",
                  m.localPeakBytes / 1048576.0);
  char line[256];
  std::snprintf(line, sizeof line,
                "step %ld/%ld  loss %.4f  acc %s%s  %.3f s%s", m.step,
                totalSteps, m.loss, accText, testText, m.stepSeconds, peakText);
  return line;
}

std::string MetricsLog::summaryLine(const RunSummary &s) {
  char accBuf[32] = "-";
  if (std::isfinite(s.lastAccuracy))
    std::snprintf(accBuf, sizeof accBuf, "%.4f", s.lastAccuracy);
  const double meanStep = s.steps ? s.totalSeconds / s.steps : 0.0;
  char line[512];
  if (!s.hasMemory) {
    std::snprintf(line, sizeof line,
                  "%s: train %s, %ld step(s), final loss %.4f, final acc %s, "
                  "mean step %.3f s",
                  s.modelName, s.failed ? "FAILED" : "ok", s.steps, s.lastLoss,
                  accBuf, meanStep);
    return line;
  }
  char testBuf[64] = "-";
  if (s.pooledCounted > 0)
    std::snprintf(testBuf, sizeof testBuf, "%.4f (last %zu step(s))",
                  s.pooledCorrect / s.pooledCounted, s.pooledSteps);
  std::snprintf(line, sizeof line,
                "%s: train %s, %ld step(s), final loss %.4f, final acc %s, "
                "test acc %s, mean step %.3f s, %.0f tokens/s, peak memory %zu "
                "bytes (%.1f MiB)",
                s.modelName, s.failed ? "FAILED" : "ok", s.steps, s.lastLoss,
                accBuf, testBuf, meanStep,
                s.totalSeconds > 0 ? s.tokensPerStep * s.steps / s.totalSeconds
                                   : 0.0,
                s.maxPeakBytes, s.maxPeakBytes / 1048576.0);
  return line;
}

} // namespace mgrt
