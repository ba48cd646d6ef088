#!/bin/sh
# A failed collective or peer must end the whole job with a non-zero exit
# code and a clear message, never hang (timeout 60 s per case).
# Usage: comm_failure_test.sh MPIRUN BINARY
set -u
MPIRUN=$1
BIN=$2
status=0
run_case() { # mode expected-message [message that must not appear]
  out=$(MEGAGRAPH_COMM_TIMEOUT=2 timeout 60 $MPIRUN -np 2 "$BIN" "$1" 2>&1)
  rc=$?
  report "$1" "$2" "${3:-}"
}
report() { # case expected-message forbidden-message (uses $out, $rc)
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
  elif [ -n "$3" ] && printf '%s' "$out" | grep -q -- "$3"; then
    echo "FAIL $1: a message matching '$3':"
    echo "$out"
    status=1
  else
    echo "ok   $1: exit code $rc, message: $(printf '%s' "$out" | grep -m1 -- "$2")"
  fi
}
# The aborting rank's message stands alone: its peer stays quiet.
run_case bad-arg "megagraph comm: rank 1 of 2: mgrt_comm_all_reduce: unsupported dtype 12345" "rank 0 of 2"
run_case peer-exit "megagraph comm: rank 0 of 2: lost peer rank 1 (its process ended early"
run_case timeout "megagraph comm: rank 0 of 2: MPI_Iallreduce: no progress for 2 s"
run_case grid-mismatch "compiled for a grid of 3 processes.*launch it with mpirun -np 3"

# Settings that are no number of seconds: every rank refuses them.
for var in MEGAGRAPH_COMM_TIMEOUT MEGAGRAPH_HEARTBEAT_TIMEOUT; do
  out=$(env $var=abc timeout 60 $MPIRUN -np 2 "$BIN" loop 2>&1)
  rc=$?
  report "$var=abc" "megagraph comm: rank [01] of 2: mgrt_comm_init: $var='abc' is not a number of seconds (0 or more)" "rank [01] pid"
done

# A step longer than the heartbeat timeout is not a lost rank: the job
# finishes normally.
out=$(MEGAGRAPH_HEARTBEAT_PERIOD=0.5 MEGAGRAPH_HEARTBEAT_TIMEOUT=2 \
      MEGAGRAPH_COMM_TIMEOUT=60 timeout 60 $MPIRUN -np 2 "$BIN" long-step 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ "$(printf '%s\n' "$out" | grep -c ': finished')" -ne 2 ] ||
   printf '%s' "$out" | grep -q "megagraph comm"; then
  echo "FAIL long-step: exit code $rc:"
  echo "$out"
  status=1
else
  echo "ok   long-step: exit code 0, both ranks finished, no message"
fi

# The launcher ends a healthy job (SIGTERM to mpirun, as a cancelled job
# gets): the ranks say so instead of blaming a peer.
log=$(mktemp)
# (timeout --foreground passes the SIGTERM on to mpirun alone.)
MEGAGRAPH_HEARTBEAT_TIMEOUT=5 timeout --foreground 60 $MPIRUN -np 2 "$BIN" loop >"$log" 2>&1 &
job=$!
n=0
while [ "$(grep -c ' pid ' "$log")" -lt 2 ] && [ $n -lt 300 ]; do
  sleep 0.1
  n=$((n + 1))
done
kill -TERM $job
wait $job
rc=$?
out=$(cat "$log")
rm -f "$log"
# mpirun, ending itself, may drop a rank's last output: one such line is
# required, and no rank may blame a peer.
report "sigterm" \
  "megagraph comm: rank [01] of 2: the launcher ended the job (signal 15) while every peer was alive" \
  "lost peer"
exit $status
