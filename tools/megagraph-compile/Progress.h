//===- Progress.h - megagraph-compile's phase timings -----------*- C++ -*-===//
//
// Part of MegaGraph. megagraph-compile names each phase it finishes
// (import, plan, raise, autodiff, lower, LLVM, codegen, link) with its
// elapsed time and the CPU time the process spent in it (which, unlike the
// elapsed time, does not grow when other jobs share the cores), one stderr
// line each, when stderr is a terminal; piped, it is quiet.
// --progress or MEGAGRAPH_PROGRESS=1 force the lines, MEGAGRAPH_PROGRESS=0
// silences them.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_TOOLS_COMPILE_PROGRESS_H
#define MEGAGRAPH_TOOLS_COMPILE_PROGRESS_H

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <string>

namespace megagraph {

/// Whether phase lines are printed: `forced` (--progress), else
/// MEGAGRAPH_PROGRESS (1/0), else whether stderr is a terminal.
bool progressEnabled(bool forced);

/// Times consecutive phases; each `done` prints the phase that just ended.
class PhaseTimer {
public:
  explicit PhaseTimer(bool enabled);

  /// Ends the current phase, named `phase`, and starts the next one.
  void done(llvm::StringRef phase);

private:
  using Clock = std::chrono::steady_clock;
  bool enabled;
  Clock::time_point start, phaseStart;
  double phaseCpu; // CPU seconds of the process when the phase began
};

} // namespace megagraph

#endif // MEGAGRAPH_TOOLS_COMPILE_PROGRESS_H
