//===- CommFailure.cpp - A job that fails on purpose ---------------------===//
//
// Driven by comm_failure_test.sh under mpirun -np 2; each mode makes rank 1
// fail while rank 0 waits in a collective, and the job must end (non-zero,
// with a message) instead of hanging:
//   bad-arg        rank 1 passes a bad dtype (abort mode)
//   peer-exit      rank 1 exits without a word
//   timeout        rank 1 never joins (MEGAGRAPH_COMM_TIMEOUT=2 is set by
//                  the script)
//   grid-mismatch  compiled code for a 3-process grid on 2 processes
//   loop           every rank prints "rank R pid P" and all-reduces forever
//                  (comm_failure_test.sh kills or stops one of them)
//   long-step      not a failure: rank 1 computes for 8 s, longer than the
//                  heartbeat timeout the script sets, before it joins; the
//                  job must finish normally
//
//===----------------------------------------------------------------------===//

#include "megagraph/Comm.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: %s bad-arg|peer-exit|timeout|grid-mismatch|loop|long-step\n",
        argv[0]);
    return 2;
  }
  const char *mode = argv[1];
  mgrt_comm_init(&argc, &argv);
  mgrt_comm_group *w = mgrt_comm_world();
  const int rank = mgrt_comm_rank(w);
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  if (!std::strcmp(mode, "loop")) {
    std::printf("rank %d pid %d\n", rank, static_cast<int>(getpid()));
    std::fflush(stdout);
    for (;;) {
      mgrt_comm_all_reduce(w, x, x, 8, MGRT_F32, MGRT_COMM_MAX);
      usleep(20000);
    }
  }
  if (!std::strcmp(mode, "long-step")) {
    if (rank == 1) {
      const auto end =
          std::chrono::steady_clock::now() + std::chrono::seconds(8);
      volatile double sink = 0;
      while (std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 100000; ++i)
          sink = sink + i * 1e-9;
    }
    mgrt_comm_all_reduce(w, x, x, 8, MGRT_F32, MGRT_COMM_SUM);
    std::printf("rank %d: finished\n", rank);
    mgrt_comm_finalize();
    return 0;
  }
  if (rank == 1) {
    if (!std::strcmp(mode, "bad-arg"))
      mgrt_comm_all_reduce(w, x, x, 8, 12345, MGRT_COMM_SUM);
    else if (!std::strcmp(mode, "peer-exit"))
      std::_Exit(5);
    else if (!std::strcmp(mode, "timeout"))
      sleep(60);
  }
  if (!std::strcmp(mode, "grid-mismatch")) {
    mgrt_memref_f32_1 m = {x, x, 0, {8}, {1}};
    _mlir_ciface_mgrt_comm_all_reduce_f32(&m, 3, 1, 1, 1, 1, MGRT_COMM_SUM);
  }
  mgrt_comm_all_reduce(w, x, x, 8, MGRT_F32, MGRT_COMM_SUM);
  std::printf("rank %d: the collective returned (it should not have)\n", rank);
  mgrt_comm_finalize();
  return 0;
}
