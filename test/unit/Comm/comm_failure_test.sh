#!/bin/sh
# A failed collective or peer must end the whole job with a non-zero exit
# code and a clear message, never hang (timeout 60 s per case).
# Usage: comm_failure_test.sh MPIRUN BINARY
set -u
MPIRUN=$1
BIN=$2
status=0
run_case() { # mode expected-message
  out=$(MEGAGRAPH_COMM_TIMEOUT=2 timeout 60 $MPIRUN -np 2 "$BIN" "$1" 2>&1)
  rc=$?
  if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
    echo "FAIL $1: exit code $rc (0 = the failure went unnoticed, 124 = hang)"
    echo "$out"
    status=1
  elif ! printf '%s' "$out" | grep -q -- "$2"; then
    echo "FAIL $1: exit code $rc but no message matching '$2':"
    echo "$out"
    status=1
  elif printf '%s' "$out" | grep -q "should not have"; then
    echo "FAIL $1: a collective returned"
    echo "$out"
    status=1
  else
    echo "ok   $1: exit code $rc, message: $(printf '%s' "$out" | grep -m1 -- "$2")"
  fi
}
run_case bad-arg "megagraph comm: rank 1 of 2: mgrt_comm_all_reduce: unsupported dtype 12345"
run_case peer-exit "exited\|exit code\|non-zero"
run_case timeout "megagraph comm: rank 0 of 2: MPI_Iallreduce: no progress for 2 s"
run_case grid-mismatch "compiled for a grid of 3 processes.*launch it with mpirun -np 3"
exit $status
