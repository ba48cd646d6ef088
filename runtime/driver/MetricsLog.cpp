//===- MetricsLog.cpp - The training loop's step log ----------------------===//

#include "driver/MetricsLog.h"

#include "support/Json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <stdlib.h>
#include <unistd.h>

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

bool MetricsLog::write(const EvalMetrics &e, std::string &error) {
  JsonWriter j;
  j.objectBegin()
      .attribute("eval_step", static_cast<int64_t>(e.step))
      .attribute("split", e.split)
      .attribute("batches", static_cast<int64_t>(e.batches))
      .attribute("loss", e.loss)
      .attribute("accuracy", e.accuracy)
      .attribute("nodes", e.counted)
      .objectEnd();
  const std::string line = j.str() + "\n";
  if (std::fputs(line.c_str(), file) < 0 || std::fflush(file) != 0) {
    error = "--log-json '" + path + "': write failed: " + std::strerror(errno);
    return false;
  }
  return true;
}

std::string MetricsLog::evalLine(const EvalMetrics &e) {
  char acc[32] = "-";
  if (std::isfinite(e.accuracy))
    std::snprintf(acc, sizeof acc, "%.3f", e.accuracy);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "eval after step %ld: %s split, %ld batch(es), %lld nodes, "
                "loss %.4f, acc %s",
                e.step, e.split.c_str(), e.batches, (long long)e.counted,
                e.loss, acc);
  return buf;
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
    if (!m.stateBytes.empty())
      j.attributeArray("state_bytes", m.stateBytes);
    if (!m.scheduleBytes.empty())
      j.attributeArray("schedule_bytes", m.scheduleBytes);
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

/// Whether step lines are one live line: stdout a terminal, or
/// MEGAGRAPH_PROGRESS=1 (=0: plain lines).
static bool liveConsole() {
  static const bool live = [] {
    if (const char *env = getenv("MEGAGRAPH_PROGRESS"))
      return *env != '\0' && std::strcmp(env, "0") != 0;
    return isatty(fileno(stdout)) != 0;
  }();
  return live;
}

/// The live form of a step line: it replaces the previous step's (cursor
/// up, clear line) and adds throughput and the time left at the mean step
/// time so far.
static std::string liveStepLine(const StepMetrics &m, long totalSteps,
                                const char *accText, const char *testText) {
  static double elapsed = 0;
  if (m.step <= 1)
    elapsed = 0;
  elapsed += m.stepSeconds;
  const double eta =
      m.step > 0 && totalSteps > m.step
          ? elapsed / m.step * static_cast<double>(totalSteps - m.step)
          : 0;
  char tokens[48] = "";
  if (m.tokensPerSecond > 0)
    std::snprintf(tokens, sizeof tokens, "  %.0f tokens/s", m.tokensPerSecond);
  char line[256];
  std::snprintf(line, sizeof line,
                "%sstep %ld/%ld  loss %.4f  acc %s%s%s  ETA %ld:%02ld",
                m.step > 1 ? "\033[A\033[K" : "", m.step, totalSteps, m.loss,
                accText, testText, tokens, static_cast<long>(eta) / 60,
                static_cast<long>(eta) % 60);
  return line;
}

std::string MetricsLog::stepLine(const StepMetrics &m, long totalSteps) {
  char accText[32] = "-", testText[32] = "", peakText[48] = "";
  if (std::isfinite(m.accuracy))
    std::snprintf(accText, sizeof accText, "%.3f", m.accuracy);
  if (std::isfinite(m.testAccuracy))
    std::snprintf(testText, sizeof testText, "  test %.3f", m.testAccuracy);
  if (liveConsole())
    return liveStepLine(m, totalSteps, accText, testText);
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
