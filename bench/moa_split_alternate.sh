#!/bin/bash
# moa=1 with gp and mop against gp and mop, alternated round by round
# (bench/results/2026-12-06-moa-with-gp-mop.md). Run it in a folder with
# the GCN executables gp_2, gp_2_moa_1_chunks_4, mop_2 and
# mop_2_moa_1_chunks_4 (megagraph-compile --plan gp=2, ...); T=threads per
# rank (default 1). Prints each run's median step time of steps 2-6 (the
# slowest rank), the bytes each rank sent and the final loss, with the
# load average when the run started.
DATA=synthetic:rmat,nodes=65536,edges=524288,classes=8,features=16,seed=3
for round in 1 2 3; do
  for v in gp_2 gp_2_moa_1_chunks_4 mop_2 mop_2_moa_1_chunks_4; do
    rm -f $v.jsonl
    load=$(cut -d' ' -f1 /proc/loadavg)
    MEGAGRAPH_NUM_THREADS=${T:-1} mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 2 ./$v --mode train --data $DATA --steps 6 --log-json $v.jsonl --quiet > /dev/null 2>&1
    /usr/bin/python3 -c "
import json,statistics,sys
r=[json.loads(l) for l in open('$v.jsonl')]
t=[x['step_time_s'] if not isinstance(x['step_time_s'],list) else max(x['step_time_s']) for x in r[1:]]
print('round $round $v load $load median_step_s %.4f comm %s loss %.6f'%(statistics.median(t), r[-1]['comm_bytes'], r[-1]['loss']))"
  done
done
