#!/usr/bin/env bash
# Largest sequence length S that trains under a per-rank memory cap, per
# parallel plan, on 4 ranks at one global batch.
#
# Model: the Graphormer-style model of bench/run_cp_bench.sh
# (test/E2E/train_graphormer_check.py: linear node encoder + in/out-degree
# embeddings, spatial bias [B,H,S,S] from an SPD embedding, 2 pre-LN layers,
# D=32, H=4, 8 classes), SGD, trained on the driver's synthetic SBM
# (8*S nodes, S nodes per sequence). It is exported once per S with a
# dynamic batch axis (traced at B=2: a B=1 trace is not raised to
# gt.degree_embedding) and every plan binds its per-rank batch with
# --input-shape, so all plans compile the same graph.
#
# Equal global batch GB (default 4 sequences per step) for every plan:
#   dp=4          B = GB/4 per rank (1 sequence of S rows)
#   cp=4          B = GB, S/4 rows per rank
#   dp=2,cp=2     B = GB/2 per replica, S/2 rows per rank
#   pp=2,cp=2     mb = PP_MB micro-batches of GB/PP_MB sequences, S/2 rows
# plus, with EXTRA_CP1=1, cp=4 at global batch 1 (one sequence per replica,
# as dp=4 has): the case where cp should reach about 2x the S of dp=4.
#
# For each plan, S runs over multiples of STEP. "Fits" is decided twice,
# each with its own search:
#   predicted: megagraph-compile --plan P --devices 4 --device-memory CAP
#              --emit=plan says "fits" (the cost model's per-rank peak <= CAP);
#              doubling from STEP up to S_MAX, then bisection between the
#              last S that fit and the first that did not
#   measured:  the executable trains STEPS steps under mpirun -np 4 with the
#              runtime cap --device-memory CAP (a tracked allocation over it
#              stops the rank with exit 3) and, on every rank and step,
#              peak_bytes + state_bytes <= CAP (the runtime's tracked peak,
#              including the driver's batch, plus the parameters and optimizer
#              state held outside its allocator; not RSS); searched from the
#              predicted largest S up (or down) in growing steps, then
#              bisection, so an accurate model costs 2-3 runs per plan
# Then at one common S (COMMON_S, default the smallest of the measured
# largest S, so every plan trains there): per-rank peak, step time (mean of
# steps 2..STEPS) and comm_bytes per step of each plan; and the plan
# megagraph-compile chooses itself (no --plan; --devices 4 --device-memory
# CAP, the model's batch = the global batch) against plain dp=4 at that S
# and at the first S where dp=4 did not fit.
#
# Writes bench/results/<date>-max-seq.md (OUT) with the command, commit and
# load. Step times on the shared 2-core machine (4 ranks oversubscribed) are
# noisy; memory is deterministic.
#
# usage: bash bench/run_max_seq_bench.sh [BUILD_DIR]
#   env [default]: CAP [96MiB], GB [4], STEP [256], S_MAX [8192], STEPS [3],
#   PP_MB [2], COMMON_S [], EXTRA_CP1 [1], THREADS [1]
#   (threads per rank), OUT, WORK [BUILD_DIR/bench-work/max-seq],
#   ONLY [] (plan names, e.g. "cp4", or "cp4r": cp=4 with the ring; see
#   add_plan below): search only
#   these plans (largest S predicted and measured, as above) and write just
#   that table, S_LIST [] (with ONLY: measure and predict exactly these S
#   instead of searching)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${1:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
COMPILE=$BUILD/bin/megagraph-compile
CAP=${CAP:-96MiB}
GB=${GB:-4}
STEP=${STEP:-256}
S_MAX=${S_MAX:-8192}
STEPS=${STEPS:-3}
PP_MB=${PP_MB:-2}
COMMON_S=${COMMON_S:-}
EXTRA_CP1=${EXTRA_CP1:-1}
THREADS=${THREADS:-1}
WORK=${WORK:-$BUILD/bench-work/max-seq}
OUT=${OUT:-$ROOT/bench/results/$(date -u +%Y-%m-%d)-max-seq.md}
PY=/usr/bin/python3
MPI=(mpirun --oversubscribe --mca btl self,vader -np 4)
[ "$(id -u)" = 0 ] && MPI=(mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 4)
export MEGAGRAPH_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS
export OPENBLAS_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS
export MEGAGRAPH_PROGRESS=0
mkdir -p "$WORK"
[ -x "$COMPILE" ] || { echo "error: $COMPILE not found; build megagraph-compile and megagraph_rt first" >&2; exit 1; }
CAP_BYTES=$($PY - "$CAP" <<'PYEOF'
import re, sys
m = re.fullmatch(r"([0-9.]+)\s*([KMGT]?)(i?B?)", sys.argv[1])
if not m:
    sys.exit(f"bad CAP {sys.argv[1]}")
v, u, i = float(m.group(1)), m.group(2), m.group(3)
base = 1000 if i == "B" else 1024
print(int(v * base ** " KMGT".index(u or " ")))
PYEOF
)
START_LOAD=$(uptime)
START_TIME=$(date -u '+%Y-%m-%d %H:%M UTC')
COMMIT=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo "+dirty")

# name -> "plan B_per_rank global_batch"
declare -A PLAN BATCH GLOBAL
add_plan() { PLAN[$1]=$2 BATCH[$1]=$3 GLOBAL[$1]=$4; NAMES+=("$1"); }
NAMES=()
add_plan dp4 "dp=4" $((GB / 4)) "$GB"
add_plan cp4 "cp=4" "$GB" "$GB"
add_plan dp2cp2 "dp=2,cp=2" $((GB / 2)) "$GB"
add_plan pp2cp2 "pp=2,cp=2,mb=$PP_MB" $((GB / PP_MB)) "$GB"
[ "$EXTRA_CP1" = 1 ] && add_plan cp4g1 "cp=4" 1 1
# Only with ONLY: cp=4 with the ring (K / V in blocks of S/4 rows).
[ -n "${ONLY:-}" ] && add_plan cp4r "cp=4,cp_mode=ring" "$GB" "$GB"

log() { echo "[max-seq $(date -u +%H:%M:%S)] $*" >&2; }
TRAIN=(--train --optimizer sgd --lr 0.01)

# export S -> $WORK/g_S.onnx (dynamic batch axis, same weights for every S)
export_model() {
  local s=$1 f=$WORK/g_$1.onnx
  [ -f "$f" ] || ROOT=$ROOT $PY - "$s" "$f" <<'PYEOF' >/dev/null 2>&1
import os, sys, torch
sys.path.insert(0, os.environ["ROOT"] + "/test/E2E")
import train_graphormer_check as tg
s, path = int(sys.argv[1]), sys.argv[2]
torch.manual_seed(0)
m = tg.Graphormer()
b = 2
inputs = (torch.randn(b, s, tg.F), torch.zeros(b, s, dtype=torch.long),
          torch.zeros(b, s, dtype=torch.long),
          torch.zeros(b, s, s, dtype=torch.long))
names = ["x", "in_degree", "out_degree", "spd"]
torch.onnx.export(m, inputs, path, input_names=names, output_names=["logits"],
                  opset_version=17,
                  dynamic_axes={n: {0: "batch"} for n in names + ["logits"]})
PYEOF
  echo "$f"
}

# shapes B S -> the --input-shape flags
shapes() {
  local b=$1 s=$2
  echo "--input-shape x=${b}x${s}x16 --input-shape in_degree=${b}x${s}" \
       "--input-shape out_degree=${b}x${s} --input-shape spd=${b}x${s}x${s}"
}

# predict NAME S -> "PEAK_BYTES FITS" from the cost model (cached)
predict() {
  local name=$1 s=$2 f=$WORK/pred_$1_$2
  if [ ! -s "$f" ]; then
    local onnx
    onnx=$(export_model "$s")
    # shellcheck disable=SC2046
    if $COMPILE "$onnx" $(shapes "${BATCH[$name]}" "$s") "${TRAIN[@]}" \
        --plan "${PLAN[$name]}" --devices 4 --device-memory "$CAP_BYTES" \
        --emit=plan > "$f.json" 2> "$f.err"; then
      $PY -c 'import json,sys; j=json.load(open(sys.argv[1])); print(int(j["prediction"]["peak_bytes"]), "yes" if j["fits"] else "no")' "$f.json" > "$f"
    else
      echo "refused $(grep -m1 error "$f.err" | tr ' ' '_')" > "$f"
    fi
  fi
  cat "$f"
}

# measure NAME S [STEPS] -> one line (cached per name, S, steps):
#   "OK MAXTOTAL MAXPEAK MAXSTATE MAXBASE STEP_S COMM_MAX COMM_SUM"
#   or "FAIL WHY" (WHY without spaces: compile error or the rank's message)
measure() {
  local name=$1 s=$2 steps=${3:-$STEPS}
  local f=$WORK/run_${name}_${s}_$steps
  if [ ! -s "$f" ]; then
    local onnx exe=$WORK/exe_${name}_$s rc=0
    onnx=$(export_model "$s")
    if [ ! -x "$exe" ]; then
      # shellcheck disable=SC2046
      if ! $COMPILE "$onnx" $(shapes "${BATCH[$name]}" "$s") "${TRAIN[@]}" \
          --plan "${PLAN[$name]}" --emit=exe -o "$exe" > "$exe.out" 2> "$exe.err"; then
        echo "FAIL compile:_$(grep -m1 error "$exe.err" | tr ' ' '_')" > "$f"
        cat "$f"; return
      fi
    fi
    rm -f "$f.jsonl"
    local t0=$SECONDS
    "${MPI[@]}" "$exe" --mode train --quiet --steps "$steps" \
      --data "synthetic:sbm,nodes=$((8 * s)),classes=8,features=16,signal=3,seed=3" \
      --device-memory "$CAP_BYTES" --log-json "$f.jsonl" > "$f.out" 2> "$f.err" || rc=$?
    log "$name S=$s steps=$steps rc=$rc $((SECONDS - t0)) s"
    if [ "$rc" != 0 ]; then
      local why
      why=$(grep -m1 -E 'out of device memory|error' "$f.err" "$f.out" | sed 's/^[^:]*://' | cut -c1-160)
      echo "FAIL exit_${rc}:_$(echo "$why" | tr ' ' '_')" > "$f"
    else
      $PY - "$f.jsonl" "$CAP_BYTES" > "$f" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
cap = int(sys.argv[2])
tot = max(p + s for r in recs for p, s in zip(r["peak_bytes"], r["state_bytes"]))
peak = max(max(r["peak_bytes"]) for r in recs)
state = max(max(r["state_bytes"]) for r in recs)
base = max(max(r["base_bytes"]) for r in recs)
times = [r["step_time_s"] for r in recs[1:]] or [recs[0]["step_time_s"]]
comm = recs[-1]["comm_bytes"]
status = "OK" if tot <= cap else "FAIL"
if status == "OK":
    print(f"OK {tot} {peak} {state} {base} {sum(times) / len(times):.3f} {max(comm)} {sum(comm)}")
else:
    print(f"FAIL peak+state_{tot}_over_cap")
PYEOF
    fi
  fi
  cat "$f"
}

fits_pred() { case $(predict "$1" "$2") in *" yes") return 0 ;; *) return 1 ;; esac; }
fits_meas() { case $(measure "$1" "$2") in OK*) return 0 ;; *) return 1 ;; esac; }

# largest PRED NAME [SEED] -> "OK_S BAD_S" (0 = none; BAD_S 0 = none up to
# S_MAX). Without SEED: doubling from STEP, then bisection. With SEED (the
# predicted largest S): steps of STEP, 2*STEP, 4*STEP.. up from SEED while
# it fits (down while it does not), then bisection; so a good prediction
# costs two or three measured runs.
largest() {
  local pred=$1 name=$2 seed=${3:-0} ok=0 bad=0 s d
  if [ "$seed" -gt 0 ]; then
    d=$STEP
    if $pred "$name" "$seed"; then
      ok=$seed
      while [ $((ok + d)) -le "$S_MAX" ]; do
        if $pred "$name" $((ok + d)); then ok=$((ok + d)); d=$((d * 2)); else bad=$((ok + d)); break; fi
      done
    else
      bad=$seed
      while [ $((bad - d)) -ge "$STEP" ]; do
        if $pred "$name" $((bad - d)); then ok=$((bad - d)); break; else bad=$((bad - d)); d=$((d * 2)); fi
      done
    fi
  else
    s=$STEP
    while [ "$s" -le "$S_MAX" ]; do
      if $pred "$name" "$s"; then ok=$s; s=$((s * 2)); else bad=$s; break; fi
    done
  fi
  if [ "$bad" -gt 0 ]; then
    while [ $((bad - ok)) -gt "$STEP" ]; do
      local mid=$(( (ok + bad) / 2 / STEP * STEP ))
      if $pred "$name" "$mid"; then ok=$mid; else bad=$mid; fi
    done
  fi
  echo "$ok $bad"
}

mib() { $PY -c "print(f'{int(float(\"$1\")) / 2**20:.1f}')"; }

declare -A PRED_OK PRED_BAD MEAS_OK MEAS_BAD
search_plan() {
  local name=$1
  read -r PRED_OK[$name] PRED_BAD[$name] < <(largest fits_pred "$name")
  log "$name predicted: largest ${PRED_OK[$name]} first over ${PRED_BAD[$name]}"
  read -r MEAS_OK[$name] MEAS_BAD[$name] < <(largest fits_meas "$name" "${PRED_OK[$name]}")
  log "$name measured: largest ${MEAS_OK[$name]} first over ${MEAS_BAD[$name]}"
}
# ONLY: the named plans alone (a search, or the S of S_LIST), then exit.
ONLY=${ONLY:-}
S_LIST=${S_LIST:-}
if [ -n "$ONLY" ]; then
  {
    echo "# Largest S under a per-rank memory cap, 4 ranks: $ONLY ($(date -u +%Y-%m-%d))"
    echo
    echo "Machine: $(grep -c ^processor /proc/cpuinfo) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), 4 MPI ranks oversubscribed on them, $THREADS thread(s) per rank."
    echo "Commit: $COMMIT. Started $START_TIME."
    echo
    echo "Command: \`ONLY=\"$ONLY\" S_LIST=\"$S_LIST\" CAP=$CAP GB=$GB STEP=$STEP S_MAX=$S_MAX STEPS=$STEPS bash bench/run_max_seq_bench.sh ${1:-build}\`"
    echo
    echo "Load before: \`$START_LOAD\`"
    echo
    echo "| plan | global batch | S | predicted MiB (fits) | measured (result, max MiB per rank = peak + state, step s) |"
    echo "|---|---|---|---|---|"
    for name in $ONLY; do
      if [ -n "$S_LIST" ]; then
        list=$S_LIST
      else
        search_plan "$name"
        list="${PRED_OK[$name]} ${MEAS_OK[$name]} ${MEAS_BAD[$name]}"
      fi
      for s in $(echo "$list" | tr ' ' '\n' | grep -v '^0$' | sort -n | uniq); do
        pr=$(predict "$name" "$s") r=$(measure "$name" "$s")
        case $r in
          OK*) rc="fits: $(mib "$(echo "$r" | cut -d' ' -f2)") MiB, $(echo "$r" | cut -d' ' -f6) s" ;;
          *) rc=${r//_/ } ;;
        esac
        echo "| \`${PLAN[$name]}\` | ${GLOBAL[$name]} | $s | $(mib "$(echo "$pr" | cut -d' ' -f1)") ($(echo "$pr" | cut -d' ' -f2)) | $rc |"
      done
      [ -n "$S_LIST" ] || echo "| \`${PLAN[$name]}\` | ${GLOBAL[$name]} | largest | ${PRED_OK[$name]} predicted | ${MEAS_OK[$name]} measured, first over the cap ${MEAS_BAD[$name]} |"
    done
    echo
    echo "Load after: \`$(uptime)\` ($(date -u '+%H:%M UTC'))"
  } > "$OUT"
  echo "wrote $OUT" >&2
  exit 0
fi

# The four plans of equal global batch first; cp4g1 after the searched plan.
for name in dp4 cp4 dp2cp2 pp2cp2; do search_plan "$name"; done

if [ -z "$COMMON_S" ]; then
  COMMON_S=$S_MAX
  for name in dp4 cp4 dp2cp2 pp2cp2; do
    o=${MEAS_OK[$name]}
    [ "$o" -gt 0 ] && [ "$o" -lt "$COMMON_S" ] && COMMON_S=$o
  done
fi

# The searched plan: no --plan, the model's batch = the global batch GB.
# searched S -> the chosen plan string (or FAIL ...); its run in run_search_S
searched() {
  local s=$1 exe=$WORK/exe_search_$1 f=$WORK/search_$1
  if [ ! -s "$f" ]; then
    local onnx
    onnx=$(export_model "$s")
    # shellcheck disable=SC2046
    if $COMPILE "$onnx" $(shapes "$GB" "$s") "${TRAIN[@]}" --devices 4 \
        --device-memory "$CAP_BYTES" --explain --emit=exe -o "$exe" \
        > "$exe.out" 2> "$exe.err"; then
      sed -n 's/.*chosen plan \([^ ]*\) for 4 device(s): predicted step \([^ ]*\) s, peak \(.*\) per device.*/\1 \2 \3/p' "$exe.err" |
        head -1 | awk '{p = $1; t = $2; $1 = $2 = ""; gsub(/ /, ""); print p, t, $0}' > "$f"
    else
      echo "FAIL $(grep -m1 error "$exe.err" | tr ' ' '_')" > "$f"
    fi
  fi
  cat "$f"
}
# measure_searched S -> as measure
measure_searched() {
  local s=$1
  case $(searched "$s") in FAIL*) searched "$s"; return ;; esac
  local plan
  plan=$(searched "$s")
  PLAN[search]=${plan%% *} BATCH[search]=$GB
  # measure compiles exe_search_S itself only when it is missing: it is not
  measure search "$s" "$STEPS"
}

S_BEYOND=${MEAS_BAD[dp4]}
for name in "${NAMES[@]}"; do
  [ "$name" = cp4g1 ] && continue
  measure "$name" "$COMMON_S" "$STEPS" > /dev/null
  predict "$name" "$COMMON_S" > /dev/null
done
for s in "$COMMON_S" $([ "$S_BEYOND" -gt 0 ] && echo "$S_BEYOND"); do
  searched "$s" > /dev/null
  measure_searched "$s" > /dev/null || true
  measure dp4 "$s" "$STEPS" > /dev/null
done
[ "$EXTRA_CP1" = 1 ] && search_plan cp4g1

# ---- report ----
field() { echo "$1" | cut -d' ' -f"$2"; }
{
  echo "# Largest S under a per-rank memory cap, 4 ranks ($(date -u +%Y-%m-%d))"
  echo
  echo "Machine: $(grep -c ^processor /proc/cpuinfo) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), 4 MPI ranks oversubscribed on them, $THREADS thread(s) per rank."
  echo "Commit: $COMMIT. Started $START_TIME."
  echo
  echo "Command: \`CAP=$CAP GB=$GB STEP=$STEP S_MAX=$S_MAX STEPS=$STEPS PP_MB=$PP_MB EXTRA_CP1=$EXTRA_CP1 bash bench/run_max_seq_bench.sh ${1:-build}\`"
  echo
  echo "Load before: \`$START_LOAD\`"
  echo
  echo "Model: test/E2E/train_graphormer_check.py Graphormer-style (2 layers, D=32, H=4, spatial bias [B,H,S,S] from the SPD, degree embeddings), SGD; synthetic SBM of 8·S nodes."
  echo "Cap: $CAP ($CAP_BYTES bytes) per rank. Measured memory per rank = peak_bytes + state_bytes of the step log (runtime-tracked peak including the driver's batch, plus parameters/optimizer state), the largest over ranks and steps; the runtime enforces --device-memory on the tracked bytes (exit 3 over it). Predicted = \`--emit=plan --plan P --devices 4 --device-memory CAP\`."
  echo
  echo "## Largest S (multiples of $STEP up to $S_MAX; predicted: doubling then bisection; measured: from the predicted S up or down, then bisection)"
  echo
  echo "| plan | global batch | sequences per rank × rows per rank | largest S predicted (predicted MiB) | largest S measured (measured MiB) | first S measured over the cap (why) |"
  echo "|---|---|---|---|---|---|"
  for name in "${NAMES[@]}"; do
    [ -n "${PRED_OK[$name]:-}" ] || continue
    p=${PLAN[$name]} b=${BATCH[$name]}
    case $p in
      dp=4) rows="S" per="$b" ;;
      cp=4) rows="S/4" per="$b" ;;
      dp=2,cp=2) rows="S/2" per="$b" ;;
      pp*) rows="S/2" per="$PP_MB × $b (micro-batches)" ;;
    esac
    po=${PRED_OK[$name]} mo=${MEAS_OK[$name]} mb=${MEAS_BAD[$name]}
    pcell="-"; [ "$po" -gt 0 ] && pcell="$po ($(mib "$(field "$(predict "$name" "$po")" 1)"))"
    [ "${PRED_BAD[$name]}" = 0 ] && pcell="≥ $pcell"
    mcell="-"; [ "$mo" -gt 0 ] && mcell="$mo ($(mib "$(field "$(measure "$name" "$mo")" 2)"))"
    bcell="none up to $S_MAX"
    [ "$mb" -gt 0 ] && bcell="$mb ($(measure "$name" "$mb" | cut -d' ' -f2- | tr '_' ' '))"
    echo "| \`$p\` | ${GLOBAL[$name]} | $per × $rows | $pcell | $mcell | $bcell |"
  done
  echo
  echo "## Per plan at S = $COMMON_S (global batch $GB, $STEPS steps; step time = mean of steps 2..$STEPS)"
  echo
  echo "| plan | measured MiB per rank (tracked peak + state) | of which driver's batch (base) MiB | predicted MiB | step s | comm bytes per step (max rank / all ranks) |"
  echo "|---|---|---|---|---|---|"
  for name in dp4 cp4 dp2cp2 pp2cp2; do
    r=$(measure "$name" "$COMMON_S" "$STEPS") pr=$(predict "$name" "$COMMON_S")
    case $r in
      OK*) echo "| \`${PLAN[$name]}\` | $(mib "$(field "$r" 2)") ($(mib "$(field "$r" 3)") + $(mib "$(field "$r" 4)")) | $(mib "$(field "$r" 5)") | $(mib "$(field "$pr" 1)") | $(field "$r" 6) | $(field "$r" 7) / $(field "$r" 8) |" ;;
      *) echo "| \`${PLAN[$name]}\` | ${r//_/ } | | | | |" ;;
    esac
  done
  echo
  echo "## Searched plan (no --plan; --devices 4 --device-memory $CAP, global batch $GB) vs plain dp=4"
  echo
  echo "| S | plan | predicted step s, peak | measured MiB per rank | step s | comm bytes per step (max rank / all ranks) |"
  echo "|---|---|---|---|---|---|"
  for s in "$COMMON_S" $([ "$S_BEYOND" -gt 0 ] && echo "$S_BEYOND"); do
    sr=$(searched "$s")
    for which in search dp4; do
      if [ $which = search ]; then
        case $sr in FAIL*) echo "| $s | searched: ${sr//_/ } | | | | |"; continue ;; esac
        label="searched: \`${sr%% *}\`"; pcell="$(field "$sr" 2) s, $(field "$sr" 3)"
      else
        label="\`dp=4\`"; pr=$(predict dp4 "$s"); pcell="$(mib "$(field "$pr" 1)") MiB (fits: $(field "$pr" 2))"
      fi
      r=$(measure "$which" "$s" "$STEPS" 2>/dev/null || true)
      case $r in
        OK*) echo "| $s | $label | $pcell | $(mib "$(field "$r" 2)") | $(field "$r" 6) | $(field "$r" 7) / $(field "$r" 8) |" ;;
        *) echo "| $s | $label | $pcell | ${r//_/ } | | |" ;;
      esac
    done
  done
  echo
  echo "## Every trial"
  echo
  echo "| run | result |"
  echo "|---|---|"
  for f in "$WORK"/pred_* "$WORK"/run_* "$WORK"/search_*; do
    case $f in *.json|*.err|*.out|*.jsonl) continue ;; esac
    [ -f "$f" ] && echo "| $(basename "$f") | $(tr '_' ' ' < "$f") |"
  done
  echo
  echo "Load after: \`$(uptime)\` ($(date -u '+%H:%M UTC'))"
} > "$OUT"
echo "wrote $OUT" >&2
