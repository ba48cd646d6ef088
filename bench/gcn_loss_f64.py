#!/usr/bin/env python3
"""The first-step loss of the PyG-style GCN of examples/gcn/gcn.py in
float32 and float64 on the inputs a gcn_bench.py one-process run dumped
(DUMP = <work>/<graph>/dump/step1; the module's initial weights are the
exported ones), to tell which of two float32 runs is nearer the exact
value. usage: /opt/torch-venv/bin/python bench/gcn_loss_f64.py DUMP [HIDDEN]
"""
import os, sys, numpy as np, torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "examples", "gcn")); import gcn
d = sys.argv[1]
hidden = int(sys.argv[2]) if len(sys.argv) > 2 else 128
torch.set_num_threads(2)
load = lambda n: torch.from_numpy(np.load(os.path.join(d, n)))
x, ei, labels, mask = load("x.npy"), load("edge_index.npy"), load("labels.npy"), load("label_mask.npy")
m = gcn.build("gcn", x.shape[1], hidden, int(labels.max()) + 1, layers=2)
for dt in (torch.float32, torch.float64):
    mm = m.to(dt)
    with torch.no_grad():
        ce = torch.nn.functional.cross_entropy(mm(x.to(dt), ei), labels, reduction="none")
        w = mask.to(dt)
        print(dt, repr((ce * w).sum().item() / w.sum().item()), flush=True)
