//===- Progress.cpp - megagraph-compile's phase timings -------------------===//

#include "Progress.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace megagraph;

bool megagraph::progressEnabled(bool forced) {
  if (forced)
    return true;
  if (const char *env = std::getenv("MEGAGRAPH_PROGRESS"))
    return llvm::StringRef(env) != "0" && llvm::StringRef(env) != "";
  return llvm::sys::Process::StandardErrIsDisplayed();
}

/// CPU seconds this process has used (user + system, all threads).
static double cpuSeconds() {
  std::chrono::nanoseconds user, system;
  llvm::sys::TimePoint<> elapsed;
  llvm::sys::Process::GetTimeUsage(elapsed, user, system);
  return std::chrono::duration<double>(user + system).count();
}

PhaseTimer::PhaseTimer(bool enabled)
    : enabled(enabled), start(Clock::now()), phaseStart(start),
      phaseCpu(cpuSeconds()) {}

void PhaseTimer::done(llvm::StringRef phase) {
  Clock::time_point now = Clock::now();
  double cpu = cpuSeconds();
  if (enabled) {
    double took = std::chrono::duration<double>(now - phaseStart).count();
    double total = std::chrono::duration<double>(now - start).count();
    llvm::errs() << "megagraph-compile: " << llvm::left_justify(phase, 8)
                 << llvm::format("%8.2f s  (total %.2f s)  cpu %.2f s", took,
                                 total, cpu - phaseCpu)
                 << "\n";
  }
  phaseStart = now;
  phaseCpu = cpu;
}
