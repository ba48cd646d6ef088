//===- Train.h - mgrt_main --mode train -------------------------*- C++ -*-===//
//
// Internal to the runtime. The training loop of a model compiled with a
// training step: the entry takes the model inputs, then `labels` and
// `label_mask`, and returns `loss` (and `correct`); parameters and optimizer
// state live inside the compiled code and are updated in place by the step.
//
// --data npy:DIR (NpyBatches.h) skips the graph data set below: every input,
// whatever its name, comes from the user's .npy files, one process, and the
// log has no accuracy when the step returns no `correct` (regression).
//
// Batches (../shared/DESIGN.md "Data model"): B sequences of S nodes, both
// read from the model's static [B, S, ...] input shapes (--batch / --seq-len
// must equal them). Data: --data synthetic:sbm,... or synthetic:rmat,...
// (mgrt_synthetic_generate), or
// ogb:DIR[,split=NAME] / a directory (mgrt_ogb_load, OGB raw layout). The
// nodes are cut into floor(N / S) sequences by --partition metis (default;
// mgrt_partition_metis seeded with --seed) or greedy
// (mgrt_partition_sequences), seq_len = S: sequence i = order[i*S,
// (i+1)*S); the N % S nodes of the short last one are never used. Each epoch
// visits the sequences in a seeded shuffled order (--seed, splitmix64 /
// xoshiro256**, the same on every platform), B per step; the
// floor(sequences / B) * B first of the shuffled order make the epoch's
// batches (no sequence twice in one batch), the rest wait for later epochs'
// shuffles.
//
// Inputs are filled by role (mgrt_tensor_role, megagraph/ModelABI.h: the
// compiler writes each tensor's role; a table without roles gets the
// roles of these names), each row b of the batch from its sequence,
// position s = the s-th node of the sequence:
//   x | features | node_feat   f32 [B,S,F]  node features; F must equal the
//                                            data's features=. As i64:
//                                            categorical, column f quantized
//                                            into --categories V bins over
//                                            its range, id 1 + f*V + bin
//   in_degree | out_degree     i64 [B,S]    mgrt_graph_degrees in the whole
//   degree                                   graph (degree = out_degree);
//                                            clamping to an embedding table
//                                            is the model's job
//   spd                        i64 [B,S,S]  mgrt_spd_block of the sequence,
//                                            capped at --max-distance (8)
//   adj_norm                   f32 [B,S,S]  D^-1/2 (A + I) D^-1/2 with A the
//                                            symmetrized 0/1 adjacency of the
//                                            induced subgraph (no self loops;
//                                            I adds them), D its row sums
//   labels                     i64 [B,S]    class (SBM block) of the node;
//                                            0 for unlabelled (OGB) nodes;
//                                            a data set with labels >= the
//                                            model's classes (numClassesOf,
//                                            Roles.h) is refused
//   label_mask                 bool [B,S]   1 for training nodes. SBM: a
//                                            seeded (--seed) exact share
//                                            round(--train-fraction * N) of
//                                            all nodes, default 0.8; the rest
//                                            are test nodes. OGB: labelled
//                                            nodes of the train split
//   eval_mask (optional)       f32 [B,S]    1 for test nodes: SBM the nodes
//                                            outside label_mask, OGB the
//                                            labelled nodes of the test split
// (i32 is accepted for the integer inputs and u8 for label_mask.)
// Outputs: `loss` f32 (one element) is required (without it the model has
// no training step: exit 2); `correct` f32 (one element, number of
// correctly classified counted nodes) gives accuracy = correct / number of
// masked nodes in the batch; `eval_correct` f32 (one element, computed
// before the update) with input eval_mask gives test_accuracy =
// eval_correct / sum(eval_mask); any other output is allocated and ignored.
// --dump-inputs DIR writes each step's inputs to DIR/step<t>/<name>.npy,
// and for a full graph whose rows are not the data set's order (gp's
// parts, the moa renumbering of NodeOrder.h) DIR/node_order.npy: the data
// set's node at each row, which maps any per-node value back.
//
// The parts (each unit-tested alone): the batch sources of BatchSource.h,
// the topology builder (Topology.h), the step runners (StepRunner.h) and
// the metrics log (MetricsLog.h).
//
// Per step: build the batch (untimed), reset the memory peak, call the
// entry (timed: step_time_s), print `step t/K  loss L  acc A  T s  peak P
// MiB` to stdout (unless --quiet) and append to --log-json one line
//   {"step":t,"loss":L,"accuracy":A,"test_accuracy":TA,"step_time_s":T,
//    "peak_bytes":[P],"base_bytes":[Q],"comm_bytes":[C],"state_bytes":[M],
//    "tokens_per_s":B*S/T,"epoch":e}
// (t from 1; accuracy null without `correct` or counted nodes, TA null
// without eval_mask / eval_correct or test nodes in the batch; peak_bytes
// one entry per rank, here one; comm_bytes per rank the bytes sent inside
// the step, mgrt_comm_bytes_sent of megagraph/Comm.h; state_bytes per rank
// the bytes of the model state it holds outside the runtime's allocator:
// parameters or ZeRO-3 shards, optimizer moments, counters, under pp only
// its stage's (so a rank's memory is peak_bytes + state_bytes); a pipelined
// model adds "compute_s":[C] and "compute_cpu_s":[U], per rank the wall and
// process CPU seconds inside its
// stage forward/backward entries). The summary's test accuracy pools the
// last min(steps, steps per epoch) steps. A non-finite loss is logged (as null)
// and stops the run with exit 1. Then a summary line on stdout. Exit codes as
// mgrt_main: 0 ok, 1 usage / data / model-shape error, 2 no training step.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_DRIVER_TRAIN_H
#define MEGAGRAPH_RUNTIME_DRIVER_TRAIN_H

#include "megagraph/Runtime.h"

#include "driver/Options.h"

namespace mgrt {

/// Runs `opts.steps` training steps of `model` (validated by mgrt_main);
/// returns the exit code.
int train(const mgrt_model_info &model, const Options &opts);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_DRIVER_TRAIN_H
