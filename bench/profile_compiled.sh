#!/usr/bin/env bash
# Profiles a benchmark model compiled by MegaGraph: how much of a forward is
# the attention kernel, the BLAS matmuls, allocation/free and the generated
# loops, and which ops of the generated code take the time.
#
#   bash bench/profile_compiled.sh WORKDIR [THREADS] [REPEAT]
#
# WORKDIR as written by bench/graphormer_bench.py (model.onnx, inputs/).
# Builds WORKDIR/prof/m_prof: `megagraph-compile --emit=obj` + an entry shim
# + the runtime, linked with bench/profile/kernel_timers.cpp wrapping the
# runtime entry points (-Wl,--wrap). Runs it (THREADS threads, default 2)
# with the default allocator and with glibc malloc keeping freed memory,
# then once single-threaded with program-counter sampling, attributed by
# bench/profile/attribute_samples.py to functions and to the ops of the
# lowered IR (megagraph-opt, lower-cpu of lib/Pipelines/Pipelines.cpp up to
# its loops: the bufferization part, kBufferPipeline). Needs megagraph-opt built in BUILD_DIR.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-bench}
D=$(cd "$1" && pwd)
THREADS=${2:-2}
REPEAT=${3:-4}
P=$D/prof
mkdir -p "$P"

# 1. object file, entry shim (from the ONNX signature), link with the timers
"$BUILD_DIR/bin/megagraph-compile" "$D/model.onnx" --emit=obj -o "$P/model.o"
/usr/bin/python3 - "$D/model.onnx" >"$P/shim.cpp" <<'PYEOF'
import sys, onnx
g = onnx.load(sys.argv[1], load_external_data=False).graph
inits = {i.name for i in g.initializer}
codes = {1: "MGRT_F32", 7: "MGRT_I64", 6: "MGRT_I32", 9: "MGRT_BOOL"}
def info(v):
    t = v.type.tensor_type
    dims = [d.dim_value for d in t.shape.dim]
    return '{"%s", %s, %d, {%s}}' % (v.name, codes[t.elem_type], len(dims), ", ".join(map(str, dims)))
ins = [v for v in g.input if v.name not in inits]
outs = list(g.output)
n = len(ins) + len(outs)
print('#include "megagraph/Runtime.h"')
print('extern "C" void _mlir_ciface_megagraph_model(%s);' % ", ".join(["void *"] * n))
print("static void entry(void **d) { _mlir_ciface_megagraph_model(%s); }"
      % ", ".join(f"d[{i}]" for i in range(n)))
print("static const mgrt_tensor_info inputs[] = {%s};" % ", ".join(map(info, ins)))
print("static const mgrt_tensor_info outputs[] = {%s};" % ", ".join(map(info, outs)))
print('static const mgrt_model_info model = {"model", %d, inputs, %d, outputs, entry};' % (len(ins), len(outs)))
print("int main(int argc, char **argv) { return mgrt_infer_main(argc, argv, &model); }")
PYEOF
WRAP=()
for s in _mlir_ciface_mgrt_attention_f32 _mlir_ciface_mgrt_matmul_f32 \
  _mlir_ciface_mgrt_layer_norm_f32 _mlir_memref_to_llvm_alloc \
  _mlir_memref_to_llvm_aligned_alloc _mlir_memref_to_llvm_free \
  _mlir_ciface_megagraph_model; do
  WRAP+=("-Wl,--wrap=$s")
done
g++ -O2 -I"$ROOT/runtime/include" "$P/shim.cpp" \
  "$ROOT/bench/profile/kernel_timers.cpp" "$P/model.o" "${WRAP[@]}" \
  "$BUILD_DIR/lib/libmegagraph_driver.a" "$BUILD_DIR/lib/libmegagraph_rt.a" -lopenblas -lpthread -lm -o "$P/m_prof"

# 2. the lowered IR, to name the ops of the generated code
PIPE=$(sed -n '/kBufferPipeline =/,/;/p' "$ROOT/lib/Pipelines/Pipelines.cpp" |
  grep -o '"[^"]*"' | tr -d '"\n' | sed 's/,$//')
"$BUILD_DIR/bin/megagraph-compile" "$D/model.onnx" --emit=gt -o "$P/model.gt.mlir"
"$BUILD_DIR/bin/megagraph-opt" "$P/model.gt.mlir" \
  --mlir-elide-resource-strings-if-larger=16 \
  -pass-pipeline="builtin.module(gt-decompose,$PIPE)" -o "$P/model.lowered.mlir"

# 3. runs
ARGS=()
for f in "$D"/inputs/*.npy; do
  ARGS+=(--input "$(basename "$f" .npy)=$f")
done
KEEP=(MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1099511627776)
cd "$P"
for V in default keepmem; do
  E=()
  [ $V = keepmem ] && E=("${KEEP[@]}")
  echo "== $THREADS thread(s), allocator: $V"
  env "${E[@]}" MEGAGRAPH_NUM_THREADS="$THREADS" \
    /usr/bin/time -f "process: user %U s, sys %S s, minor faults %R" \
    ./m_prof --mode infer "${ARGS[@]}" --output-dir "$P/out" \
    --repeat "$REPEAT" --quiet 2>&1 | grep -v "PROF layer_norm.* 0 calls"
  echo "-- 1 thread, sampled"
  env "${E[@]}" MEGAGRAPH_NUM_THREADS=1 PROF_SAMPLE="$P/samples.$V.txt" \
    ./m_prof --mode infer "${ARGS[@]}" --output-dir "$P/out" \
    --repeat "$REPEAT" --quiet 2>&1 | grep -E "infer|generated"
  /usr/bin/python3 "$ROOT/bench/profile/attribute_samples.py" m_prof \
    "samples.$V.txt" --ir model.lowered.mlir --runs "$REPEAT"
  echo
done
