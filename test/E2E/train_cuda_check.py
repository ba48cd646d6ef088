#!/usr/bin/env python3
"""--target cuda end to end, on the embedded Graphormer example
(examples/models/graphormer/model.onnx, AdamW): the reference is the CPU
program's 20-step loss trajectory on synthetic:sbm.

  emulate  a CPU program whose loop nests run through gt-gpu-offload's
           kernels, emulated as host loops over blocks and threads
           (--cuda-emulate-on-host): same trajectory as the CPU program
           (relative difference <= 1e-6), so the kernels' indexing is right.
  nogpu    the --target cuda executable links; on a machine without a GPU
           it exits with 1 and says so.
  gpu      the --target cuda executable trains 20 steps on the GPU; its
           losses match the CPU trajectory (relative difference <= 1e-3:
           cuBLAS and the GPU attention sum in other orders).
  gpu-bf16 the same with --precision bf16 (tensor cores): within the BF16
           tolerance of train_bf16_check.py of the CPU's FP32 trajectory.

usage: train_cuda_check.py MEGAGRAPH_COMPILE WORKDIR emulate|nogpu|gpu|gpu-bf16
Prints lines ending in OK or FAIL; exits 1 on FAIL.
"""
import json
import os
import subprocess
import sys

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "examples", "models", "graphormer", "model.onnx")
DATA = ["--data", "synthetic:sbm,nodes=1024,classes=4,features=3,signal=3,"
        "seed=3", "--categories", "16", "--max-distance", "7"]
STEPS = 20


def compile_exe(compiler, out, *extra):
    # -O1: host code optimization does not change float results (no fast
    # math), and the test compiles faster; PTX is always built at O3.
    subprocess.run([compiler, EXAMPLE, "--train", "--optimizer", "adamw",
                    "--lr", "0.003", "-O1", "--emit=exe", "-o", out, *extra],
                   check=True)


def train(exe, log):
    if os.path.exists(log):
        os.remove(log)
    subprocess.run([exe, "--mode", "train", *DATA, "--steps", str(STEPS),
                    "--log-json", log, "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)
    with open(log) as f:
        return [json.loads(line)["loss"] for line in f if line.strip()]


def compare(name, ref, got, bar):
    ok = len(ref) == STEPS and len(got) == STEPS
    diff = max((abs(a - b) / max(abs(a), 1e-12) for a, b in zip(ref, got)),
               default=float("inf"))
    ok = ok and diff <= bar
    print(f"{name}: {len(got)} steps, first loss {got[0] if got else None}, "
          f"last {got[-1] if got else None}, max relative difference "
          f"{diff:.2e} (bar {bar:g}) {'OK' if ok else 'FAIL'}")
    return ok


def main():
    compiler, work, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)

    def reference():
        cpu = os.path.join(work, "cpu")
        compile_exe(compiler, cpu)
        return train(cpu, os.path.join(work, "cpu.jsonl"))

    ok = True
    if mode == "emulate":
        emu = os.path.join(work, "emulated")
        compile_exe(compiler, emu, "--cuda-emulate-on-host")
        ok = compare("emulated kernels", reference(),
                     train(emu, os.path.join(work, "emu.jsonl")), 1e-6)
    elif mode == "nogpu":
        exe = os.path.join(work, "cuda")
        compile_exe(compiler, exe, "--target", "cuda")
        run = subprocess.run([exe, "--mode", "train", *DATA, "--steps", "1",
                              "--quiet"], capture_output=True, text=True)
        said = "no CUDA device is usable here" in run.stderr
        ok = run.returncode == 1 and said
        print(f"no GPU: exit code {run.returncode}, message "
              f"{'printed' if said else 'missing'} {'OK' if ok else 'FAIL'}")
        if not ok:
            print(run.stderr)
    elif mode == "gpu":
        exe = os.path.join(work, "cuda")
        compile_exe(compiler, exe, "--target", "cuda")
        ok = compare("gpu", reference(), train(exe, os.path.join(work, "gpu.jsonl")),
                     1e-3)
    elif mode == "gpu-bf16":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import train_bf16_check  # noqa: E402  (TOLERANCE)
        exe = os.path.join(work, "cuda-bf16")
        compile_exe(compiler, exe, "--target", "cuda", "--precision", "bf16")
        ok = compare("gpu bf16", reference(),
                     train(exe, os.path.join(work, "gpu-bf16.jsonl")),
                     train_bf16_check.TOLERANCE)
    else:
        sys.exit(f"unknown mode {mode}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
