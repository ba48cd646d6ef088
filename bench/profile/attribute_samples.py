"""Attributes the program-counter samples of bench/profile/kernel_timers.cpp.

  attribute_samples.py BINARY SAMPLES [--ir LOWERED.mlir] [--runs N]

Prints the share of samples per function (shared libraries by name), then
splits the samples that fall inside the generated function megagraph_model by
the memref.alloc call that precedes them in the code: the k-th call to the
allocator in address order is the k-th memref.alloc of the lowered IR (one
per materialized op result), so each bucket is one op of the IR, named by
the buffer type it fills and the first arith/math/linalg op of its body.
With --runs N each share is also turned into ms per forward (the sampler
fires every 200 us of wall time; use a single-threaded run)."""

import argparse
import bisect
import collections
import re
import subprocess

PERIOD_MS = 0.2

ap = argparse.ArgumentParser()
ap.add_argument("binary")
ap.add_argument("samples")
ap.add_argument("--ir", help="IR before convert-linalg-to-loops")
ap.add_argument("--runs", type=int, default=0)
ap.add_argument("--top", type=int, default=12)
a = ap.parse_args()

base, maps, pcs = 0, [], []
for line in open(a.samples):
    if line.startswith("base "):
        base = int(line.split()[1], 16)
    elif line.startswith("map "):
        f = line.split()
        lo, hi = (int(x, 16) for x in f[1].split("-"))
        maps.append((lo, hi, f[6] if len(f) > 6 else "?"))
    else:
        pcs.append(int(line, 16))

exe = a.binary.split("/")[-1]
exe_hi = max((hi for lo, hi, p in maps if p.split("/")[-1] == exe), default=0)
syms = []
for l in subprocess.run(["nm", "-C", "--defined-only", "-n", a.binary],
                        capture_output=True, text=True).stdout.splitlines():
    p = l.split(" ", 2)
    if len(p) == 3 and p[1] in "tTwW":
        syms.append((int(p[0], 16), p[2]))
sym_addrs = [s for s, _ in syms]

dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn",
                      "--disassemble=megagraph_model", a.binary],
                     capture_output=True, text=True).stdout
insns = [int(m.group(1), 16) for m in re.finditer(r"^\s*([0-9a-f]+):", dis, re.M)]
model_lo, model_hi = min(insns), max(insns)
allocs = [int(m.group(1), 16) for m in re.finditer(
    r"^\s*([0-9a-f]+):\s+call\s+\S+ <[^>]*_mlir_memref_to_llvm_(aligned_)?alloc", dis, re.M)]

ops = []
if a.ir:
    cur = None
    for l in open(a.ir):
        m = re.search(r"memref\.alloc\(\).*: (memref<[^>]*>)", l)
        if m:
            cur = [m.group(1), ""]
            ops.append(cur)
            continue
        if cur is not None and not cur[1]:
            m = re.search(r"(arith\.\w+|math\.\w+|linalg\.(fill|reduce|transpose|matmul)"
                          r"|call @\w+|memref\.copy)", l)
            if m:
                cur[1] = m.group(1)

n = len(pcs)
def share(k):
    s = f"{100 * k / n:5.1f}%"
    if a.runs:
        s += f" {k * PERIOD_MS / a.runs:8.1f} ms/forward"
    return s

funcs, buckets = collections.Counter(), collections.Counter()
for pc in pcs:
    off = pc - base
    if base <= pc < exe_hi:
        i = bisect.bisect_right(sym_addrs, off) - 1
        name = syms[i][1] if i >= 0 else "?"
        funcs[name[:80]] += 1
        if model_lo <= off <= model_hi:
            buckets[bisect.bisect_right(allocs, off) - 1] += 1
    else:
        lib = next((p.split("/")[-1] for lo, hi, p in maps if lo <= pc < hi), "?")
        funcs[f"[{lib}]"] += 1

print(f"{n} samples ({PERIOD_MS} ms each)")
for name, k in funcs.most_common(a.top):
    print(f"  {share(k)}  {name}")
print(f"\ninside megagraph_model, by the op (memref.alloc #k) the code fills"
      f" ({len(allocs)} alloc calls, {len(ops)} allocs in the IR):")
for k, c in buckets.most_common(a.top):
    t, op = ops[k] if 0 <= k < len(ops) else ("(before the first alloc)" if k < 0 else "?", "")
    print(f"  {share(c)}  alloc #{k:<4d} {t:34s} {op}")
