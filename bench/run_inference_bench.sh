#!/usr/bin/env bash
# CPU inference benchmark: the Graphormer-style model compiled by MegaGraph
# (megagraph-compile --emit=exe) against the same model in LibTorch
# (bench/libtorch_graphormer.cpp), same weights, same inputs, same threads.
# A benchmark, never a test.
#
#   bash bench/run_inference_bench.sh [S ...]        (default: 1024 2048 4096)
#
# Environment (defaults in brackets):
#   BUILD_DIR  build with megagraph-compile + megagraph-bench-libtorch [build-bench]
#   WORK       scratch dir for models, inputs, outputs, logs [$BUILD_DIR/bench-work]
#   THREADS    threads for both                                        [2]
#   REPEAT     timed forwards per binary                              [5]
#   RESULTS    markdown file   [bench/results/<date>-cpu-inference.md]
#   TOL        max abs error allowed against PyTorch                  [1e-3]
#   REUSE      1: keep an already exported model of the same size     [0]
#   KEEPMEM    1: also run both with glibc malloc keeping freed memory
#              (MALLOC_MMAP_MAX_=0, huge MALLOC_TRIM_THRESHOLD_): no page
#              faults after the warm-up, i.e. compute without the OS   [1]
#   NICE       run both binaries under `nice -n NICE` (e.g. -10 as root on
#              a machine shared with other jobs)                       [unset]
#
# Per S: export (bench/graphormer_bench.py), compile, then for each allocator
# setting run the compiled binary (--repeat REPEAT+1, the first run being its
# warm-up) and LibTorch (1 warm-up + REPEAT) one after the other under
# /usr/bin/time -v, check every output against PyTorch's, print markdown
# tables and write them, with the machine, date and commands, to RESULTS.
# Exit status 1 if an output is off by more than TOL.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# BUILD_DIR, THREADS, NICE, DATE, PY, thread environment, log, run
source bench/bench_common.sh
WORK=${WORK:-$BUILD_DIR/bench-work}
REPEAT=${REPEAT:-5}
TOL=${TOL:-1e-3}
REUSE=${REUSE:-0}
KEEPMEM=${KEEPMEM:-1}
RESULTS=${RESULTS:-$ROOT/bench/results/$DATE-cpu-inference.md}
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(1024 2048 4096)

COMPILE=$BUILD_DIR/bin/megagraph-compile
LIBTORCH=$BUILD_DIR/bin/megagraph-bench-libtorch
BUILD_TARGETS="megagraph-compile megagraph_rt megagraph-bench-libtorch"
require_tools "$COMPILE" "$LIBTORCH" /usr/bin/time
mkdir -p "$WORK" "$(dirname "$RESULTS")"

VARIANTS=(default)
[ "$KEEPMEM" = 1 ] && VARIANTS+=(keepmem)
variant_env() { # the `env` words of a variant
  case $1 in
    default) echo "" ;;
    keepmem) echo "MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1099511627776" ;;
  esac
}

START=$(date '+%Y-%m-%d %H:%M:%S %Z')
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for S in "${SIZES[@]}"; do
  D=$WORK/s$S
  if [ "$REUSE" != 1 ] || [ ! -f "$D/config.json" ]; then
    log "S=$S: export"
    rm -rf "$D"
    run $PY bench/graphormer_bench.py --nodes "$S" --out "$D" >"$WORK/s$S.export.log"
  fi
  log "S=$S: compile"
  t0=$(date +%s.%N)
  run "$COMPILE" "$D/model.onnx" --emit=exe -o "$D/graphormer_s$S"
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{printf "%.1f\n", $2 - $1}' >"$D/compile_s.txt"

  for V in "${VARIANTS[@]}"; do
    PREFIX=()
    # shellcheck disable=SC2207
    [ -n "$(variant_env "$V")" ] && PREFIX=(env $(variant_env "$V"))
    [ -n "$NICE" ] && PREFIX+=(nice -n "$NICE")
    rm -rf "$D/out_megagraph.$V" "$D/out_libtorch.$V"

    log "S=$S [$V]: MegaGraph ($((REPEAT + 1)) runs)"
    run "${PREFIX[@]}" /usr/bin/time -v -o "$D/megagraph.$V.time" \
      "$D/graphormer_s$S" --mode infer \
      --input x="$D/inputs/x.npy" --input in_degree="$D/inputs/in_degree.npy" \
      --input out_degree="$D/inputs/out_degree.npy" --input spd="$D/inputs/spd.npy" \
      --output-dir "$D/out_megagraph.$V" --repeat $((REPEAT + 1)) --quiet \
      >"$D/megagraph.$V.log"
    cat "$D/megagraph.$V.log"

    log "S=$S [$V]: LibTorch (1 warm-up + $REPEAT runs)"
    run "${PREFIX[@]}" /usr/bin/time -v -o "$D/libtorch.$V.time" "$LIBTORCH" \
      --model-dir "$D" --threads "$THREADS" --warmup 1 --repeat "$REPEAT" \
      --output-dir "$D/out_libtorch.$V" >"$D/libtorch.$V.log"
    cat "$D/libtorch.$V.log"
  done
done
END=$(date '+%Y-%m-%d %H:%M:%S %Z')
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- tables + results file --------------------------------------------------
CMDS_FILE=$WORK/commands.txt
printf '%s\n' "${COMMANDS[@]}" >"$CMDS_FILE"
export ROOT WORK THREADS REPEAT TOL RESULTS START END LOAD_BEFORE LOAD_AFTER \
  CMDS_FILE BUILD_DIR NICE KEEPMEM
export SIZES_LIST="${SIZES[*]}" VARIANTS_LIST="${VARIANTS[*]}"
PYTHONPATH=$ROOT/bench $PY - <<'EOF'
import json, os, re, sys
import numpy as np
from bench_report import gnu_time, machine_lines

E = os.environ
work, sizes = E["WORK"], [int(s) for s in E["SIZES_LIST"].split()]
variants = E["VARIANTS_LIST"].split()
tol, repeat = float(E["TOL"]), int(E["REPEAT"])

def err(d, which):
    want = np.load(os.path.join(d, "outputs", "logits.npy"))
    got = np.load(os.path.join(d, which, "logits.npy"))
    assert got.shape == want.shape, (which, got.shape, want.shape)
    return float(np.abs(got.astype(np.float64) - want).max())

rows, ok = {}, True
for v in variants:
    rows[v] = []
    for s in sizes:
        d = os.path.join(work, f"s{s}")
        mg = open(os.path.join(d, f"megagraph.{v}.log")).read()
        m = re.search(r"infer (\w+), (\d+) run\(s\), mean ([\d.]+) ms, min ([\d.]+) ms, "
                      r"peak memory (\d+) bytes", mg)
        lt = open(os.path.join(d, f"libtorch.{v}.log")).read()
        l = re.search(r"mean ([\d.]+) ms, min ([\d.]+) ms, max abs err ([\deE.+-]+), "
                      r"peak RSS ([\d.]+) MiB \(after load ([\d.]+) MiB\)", lt)
        if not m or not l or m.group(1) != "ok":
            sys.exit(f"error: S={s} [{v}]: cannot parse the run logs in {d}")
        r = dict(S=s, mg_mean=float(m.group(3)), mg_min=float(m.group(4)),
                 mg_runs=int(m.group(2)), mg_tracked=int(m.group(5)) / 2**20,
                 mg=gnu_time(os.path.join(d, f"megagraph.{v}.time")),
                 lt_mean=float(l.group(1)), lt_min=float(l.group(2)),
                 lt=gnu_time(os.path.join(d, f"libtorch.{v}.time")),
                 lt_loaded=float(l.group(5)),
                 mg_err=err(d, f"out_megagraph.{v}"), lt_err=err(d, f"out_libtorch.{v}"),
                 compile_s=float(open(os.path.join(d, "compile_s.txt")).read()))
        ok &= r["mg_err"] <= tol and r["lt_err"] <= tol
        rows[v].append(r)

def fmt_err(e):
    return f"{e:.1e}" + ("" if e <= tol else " **FAIL**")

def main_table(rs):
    out = ["| S | MegaGraph ms/forward | LibTorch ms/forward | speedup | "
           "MegaGraph peak RSS MiB (runtime-tracked) | LibTorch peak RSS MiB | "
           "memory ratio | max abs err MegaGraph | max abs err LibTorch |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rs:
        out.append(
            f"| {r['S']} | {r['mg_min']:.1f} | {r['lt_min']:.1f} | "
            f"{r['lt_min'] / r['mg_min']:.2f}x | {r['mg']['rss']:.0f} ({r['mg_tracked']:.0f}) | "
            f"{r['lt']['rss']:.0f} | {r['mg']['rss'] / r['lt']['rss']:.2f} | "
            f"{fmt_err(r['mg_err'])} | {fmt_err(r['lt_err'])} |")
    return out

def detail_table(rs):
    out = ["| S | MegaGraph mean / min ms | LibTorch mean / min ms | "
           "MegaGraph user / sys s, minor faults | LibTorch user / sys s, minor faults | "
           "LibTorch RSS after load MiB | megagraph-compile s |",
           "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rs:
        g, t = r["mg"], r["lt"]
        out.append(
            f"| {r['S']} | {r['mg_mean']:.1f} / {r['mg_min']:.1f} | "
            f"{r['lt_mean']:.1f} / {r['lt_min']:.1f} | "
            f"{g['user']:.1f} / {g['sys']:.1f}, {g['faults'] / 1e3:.0f}k | "
            f"{t['user']:.1f} / {t['sys']:.1f}, {t['faults'] / 1e3:.0f}k | "
            f"{r['lt_loaded']:.0f} | {r['compile_s']:.1f} |")
    return out

cfg = json.load(open(os.path.join(work, f"s{sizes[0]}", "config.json")))
machine = machine_lines(E["ROOT"], E["START"], E["END"], E["LOAD_BEFORE"],
                        E["LOAD_AFTER"], E["NICE"])
cmds = open(E["CMDS_FILE"]).read().strip()
speedups = lambda rs: ", ".join(f"{r['lt_min'] / r['mg_min']:.1f}x" for r in rs)
sections = [
    "## Results",
    "",
    f"ms/forward = the fastest of {repeat} timed forwards (MegaGraph: "
    f"--repeat {repeat + 1}, its first run counts as warm-up; LibTorch: 1 warm-up "
    "+ the timed runs); input loading is not timed. speedup = LibTorch / "
    "MegaGraph time (> 1: MegaGraph faster). Peak RSS = /usr/bin/time -v "
    "maximum resident set size of the whole process (inputs, outputs, code, "
    "libraries included); runtime-tracked = mgrt_peak_bytes, every buffer the "
    "runtime allocated, inputs and outputs included. memory ratio = MegaGraph "
    "/ LibTorch peak RSS. max abs err: against PyTorch's outputs/logits.npy "
    f"(tolerance {tol:g}).",
    "",
    "### Default allocator (as shipped)",
    "",
    *main_table(rows["default"]),
    "",
    "Whole process (load + all runs), from /usr/bin/time -v:",
    "",
    *detail_table(rows["default"]),
    "",
]
if "keepmem" in rows:
    sections += [
        "### glibc malloc keeping freed memory",
        "",
        "Both binaries again with `MALLOC_MMAP_MAX_=0 "
        "MALLOC_TRIM_THRESHOLD_=1099511627776`: freed blocks stay in the heap, "
        "so after the warm-up no forward page-faults its buffers in again (on "
        "this VM a fresh page costs microseconds). This isolates compute from "
        "the OS; the default table is what a user gets.",
        "",
        *main_table(rows["keepmem"]),
        "",
        *detail_table(rows["keepmem"]),
        "",
    ]
text = "\n".join([
    "# CPU inference: MegaGraph vs LibTorch, Graphormer-style model",
    "",
    f"Model: bench/graphormer_bench.py, {cfg['layers']} layers, D={cfg['dim']}, "
    f"H={cfg['heads']}, FFN {cfg['ffn_dim']}, B={cfg['batch']}, "
    f"{cfg['feats']} categorical features x {cfg['vocab_per_feat']} values, "
    f"{cfg['num_spatial']} SPD buckets (attention bias [B,H,S,S] from an "
    f"embedding of the SPD), degrees < {cfg['max_degree']}, {cfg['classes']} "
    f"classes, {cfg['num_params']} parameters, random directed graphs of average "
    f"degree ~{cfg['avg_degree']:g}. Forward only, float32, "
    f"{E['THREADS']} threads for both (MEGAGRAPH_NUM_THREADS, "
    f"at::set_num_threads, OMP/OPENBLAS_NUM_THREADS). LibTorch runs the "
    "PyTorch module's ops one by one (bench/libtorch_graphormer.cpp); "
    "MegaGraph is `megagraph-compile --emit=exe`.",
    "",
    "## Machine",
    "",
    *machine,
    "",
    *sections,
    "## Commands",
    "",
    "```sh",
    f"# environment: MEGAGRAPH_NUM_THREADS={E['THREADS']} OMP_NUM_THREADS={E['THREADS']} "
    f"OPENBLAS_NUM_THREADS={E['THREADS']} MKL_NUM_THREADS={E['THREADS']}",
    f"# driver: {'NICE=' + E['NICE'] + ' ' if E['NICE'] else ''}"
    f"KEEPMEM={E['KEEPMEM']} BUILD_DIR={os.path.relpath(E['BUILD_DIR'], E['ROOT'])} "
    f"REPEAT={repeat} bash bench/run_inference_bench.sh {' '.join(map(str, sizes))}",
    cmds,
    "```",
    "",
])
with open(E["RESULTS"], "w") as f:
    f.write(text)
for v in variants:
    print(f"[{v}]")
    print("\n".join(main_table(rows[v])))
    print()
    print("\n".join(detail_table(rows[v])))
    print()
print(f"wrote {os.path.relpath(E['RESULTS'], E['ROOT'])}")
if not ok:
    print(f"error: an output differs from PyTorch's by more than {tol:g}", file=sys.stderr)
    sys.exit(1)
EOF
