#!/usr/bin/env bash
# Prepares, on a machine with MegaGraph's toolchain (no GPU needed), what
# scripts/gpu_check.sh runs on a bare GPU machine:
#   DEST/bin  the CUDA test and benchmark binaries, the embedded Graphormer
#             example compiled with --train --target cuda
#             (graphormer-train-cuda), its arguments (graphormer-train.args)
#             and the CPU program's 20-step log on the same data
#             (graphormer-train-cpu.jsonl), the reference trajectory;
#   DEST/lib  the shared libraries those binaries need beyond glibc, the C++
#             runtime and CUDA (METIS, OpenBLAS, Open MPI...);
#   DEST/mpi  Debian's Open MPI packages from the apt cache (for orted).
# and packs DEST into DEST.tar.xz (about a third of the size), to carry to
# the GPU machine and unpack there.
# Usage: scripts/gpu_prepare.sh [BUILD_DIR (default build)] [DEST (.gpu)]
# then on the GPU machine: tar -xJf .gpu.tar.xz &&
#   MPI_DEBS=.gpu/mpi scripts/gpu_check.sh .gpu/bin "$OUT"
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
DEST=${2:-$ROOT/.gpu}
mkdir -p "$DEST/bin" "$DEST/lib" "$DEST/mpi"
ninja -C "$BUILD" -j2 megagraph-compile megagraph_rt megagraph_cuda \
  MegaGraphCudaTests megagraph-cuda-attention-bench
for b in MegaGraphCudaTests megagraph-cuda-attention-bench \
  MegaGraphCommNcclTests; do
  [ -x "$BUILD/bin/$b" ] && cp "$BUILD/bin/$b" "$DEST/bin/"
done

# The training check: the same example, data and steps as
# test/E2E/train_cuda_check.py.
EXAMPLE=$ROOT/examples/models/graphormer/model.onnx
ARGS="--mode train --data synthetic:sbm,nodes=1024,classes=4,features=3,signal=3,seed=3 --categories 16 --max-distance 7 --steps 20 --quiet"
compile() {
  "$BUILD/bin/megagraph-compile" "$EXAMPLE" --train --optimizer adamw \
    --lr 0.003 --emit=exe "$@"
}
compile --target cuda -o "$DEST/bin/graphormer-train-cuda"
compile -o "$DEST/bin/graphormer-train-cpu"
echo "$ARGS" > "$DEST/bin/graphormer-train.args"
rm -f "$DEST/bin/graphormer-train-cpu.jsonl"
# shellcheck disable=SC2086
"$DEST/bin/graphormer-train-cpu" $ARGS \
  --log-json "$DEST/bin/graphormer-train-cpu.jsonl" >/dev/null
rm "$DEST/bin/graphormer-train-cpu" # the GPU machine needs only its log

# Shared libraries beyond glibc, libstdc++ and CUDA's own.
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
for deb in /var/cache/apt/archives/{openmpi-bin,openmpi-common,libopenmpi3,libpmix2,libhwloc15,libevent-*,libfabric1,libibverbs1,libnl-*,libpsm*,librdmacm1,libucx0}_*.deb; do
  if [ -e "$deb" ]; then cp "$deb" "$DEST/mpi/"; fi
done
tar -C "$(dirname "$DEST")" -cJf "$DEST.tar.xz" "$(basename "$DEST")"
echo "gpu_prepare: $(ls "$DEST/bin" | wc -l) files in $DEST/bin," \
  "$(ls "$DEST/lib" | wc -l) libraries in $DEST/lib;" \
  "$DEST.tar.xz: $(du -h "$DEST.tar.xz" | cut -f1)"
