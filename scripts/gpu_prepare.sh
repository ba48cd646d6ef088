#!/usr/bin/env bash
# Prepares, on a machine with MegaGraph's toolchain and CUDA (no GPU
# needed), everything scripts/gpu_check.sh runs on a bare GPU machine, so
# that the whole first GPU check fits one command of 10 minutes:
#   DEST/bin  the CUDA test binaries (MegaGraphCudaTests, the one-rank NCCL
#             tests MegaGraphCudaCommTests and MegaGraphCommNcclTests), the
#             attention benchmark, and the embedded Graphormer example
#             (examples/models/graphormer, AdamW) compiled with --train
#             --target cuda three ways: FP32 (graphormer-train-cuda), BF16
#             (graphormer-train-cuda-bf16, --precision bf16) and a pipeline
#             of two stages (graphormer-train-cuda-pp2, --plan pp=2,mb=1:
#             two ranks, which may share one GPU); the arguments they train
#             with (graphormer-train.args) and the CPU program's 20-step
#             logs on the same data, FP32 and BF16 (graphormer-train-cpu*.jsonl),
#             the reference trajectories;
#   DEST/lib  the shared libraries those binaries need beyond glibc, the C++
#             runtime, CUDA and NCCL (METIS, OpenBLAS, Open MPI...);
#   DEST/mpi  Debian's Open MPI packages from the apt cache (mpirun, orted
#             and their libraries, unpacked there when the machine has none).
# and packs DEST into DEST.tar.xz (well under the 64 MiB a device call
# carries). The GPU machine needs only the working tree and that file:
#   tar -xJf .gpu.tar.xz && scripts/gpu_check.sh .gpu/bin "$OUT"
# Usage: scripts/gpu_prepare.sh [BUILD_DIR (default build)] [DEST (.gpu)]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
DEST=${2:-$ROOT/.gpu}
rm -rf "$DEST"
mkdir -p "$DEST/bin" "$DEST/lib" "$DEST/mpi"
ninja -C "$BUILD" -j2 megagraph-compile megagraph_rt megagraph_driver \
  megagraph_cuda megagraph_rt_nccl MegaGraphCudaTests MegaGraphCudaCommTests \
  MegaGraphCommNcclTests megagraph-cuda-attention-bench
for b in MegaGraphCudaTests MegaGraphCudaCommTests MegaGraphCommNcclTests \
  megagraph-cuda-attention-bench; do
  [ -x "$BUILD/bin/$b" ] && cp "$BUILD/bin/$b" "$DEST/bin/"
done

# The training checks: the example, data and steps of
# test/E2E/train_cuda_check.py.
EXAMPLE=$ROOT/examples/models/graphormer/model.onnx
ARGS="--mode train --data synthetic:sbm,nodes=1024,classes=4,features=3,signal=3,seed=3 --categories 16 --max-distance 7 --steps 20 --quiet"
compile() {
  "$BUILD/bin/megagraph-compile" "$EXAMPLE" --train --optimizer adamw \
    --lr 0.003 --emit=exe "$@"
}
compile --target cuda -o "$DEST/bin/graphormer-train-cuda"
compile --target cuda --precision bf16 -o "$DEST/bin/graphormer-train-cuda-bf16"
compile --target cuda --plan pp=2,mb=1 -o "$DEST/bin/graphormer-train-cuda-pp2"
echo "$ARGS" > "$DEST/bin/graphormer-train.args"
for p in fp32 bf16; do
  exe=$DEST/graphormer-train-cpu-$p
  compile --precision "$p" -o "$exe"
  log=$DEST/bin/graphormer-train-cpu.jsonl
  [ "$p" = bf16 ] && log=$DEST/bin/graphormer-train-cpu-bf16.jsonl
  rm -f "$log"
  # shellcheck disable=SC2086
  "$exe" $ARGS --log-json "$log" >/dev/null
  rm "$exe" # the GPU machine needs only the logs
done

# Shared libraries beyond glibc, libstdc++, CUDA's and NCCL's own (the GPU
# machine has those, from its CUDA toolkit or PyTorch's nvidia-* wheels).
for exe in "$DEST"/bin/*; do
  [ -x "$exe" ] || continue
  ldd "$exe" 2>/dev/null | awk '$3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
  libc.so* | libm.so* | libstdc++* | libgcc_s* | ld-linux* | libpthread* | \
    libdl.so* | librt.so* | libcublas* | libcudart* | libnccl*) ;;
  *) cp -L "$lib" "$DEST/lib/" ;;
  esac
done
for deb in /var/cache/apt/archives/{openmpi-bin,openmpi-common,libopenmpi3,libpmix2,libhwloc15,libevent-*,libfabric1,libibverbs1,libnl-*,libpsm*,librdmacm1,libucx0,libmunge2,libxnvctrl0}_*.deb; do
  case "$deb" in *-dev_*) continue ;; esac
  if [ -e "$deb" ]; then cp "$deb" "$DEST/mpi/"; fi
done
tar -C "$(dirname "$DEST")" -cJf "$DEST.tar.xz" "$(basename "$DEST")"
echo "gpu_prepare: $(ls "$DEST/bin" | wc -l) files in $DEST/bin," \
  "$(ls "$DEST/lib" | wc -l) libraries in $DEST/lib," \
  "$(ls "$DEST/mpi" | wc -l) packages in $DEST/mpi;" \
  "$DEST.tar.xz: $(du -h "$DEST.tar.xz" | cut -f1)"
