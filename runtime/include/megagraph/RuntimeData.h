/*===- megagraph/RuntimeData.h - MegaGraph runtime data layer C ABI -------===*
 *
 * The graph data layer of libmegagraph_rt (sources in runtime/data/), used by
 * the training driver to build the batches of ../shared/DESIGN.md "Data
 * model" (B sequences of S nodes): an in-memory CSR graph, a synthetic
 * stochastic block model generator with label-correlated features, degrees,
 * the row block of a sequence's shortest-path-distance (SPD) matrix that one
 * context-parallel rank owns, and a partition of the nodes into sequences.
 *
 *   graph      mgrt_graph, a CSR graph of directed edges whose arrays are
 *              tracked allocations (mgrt_alloc); mgrt_graph_free releases it.
 *   generators mgrt_sbm_generate and mgrt_rmat_generate, from a spec
 *              string "synthetic:sbm,nodes=N,..." or
 *              "synthetic:rmat,nodes=N,edges=E,..."
 *              (mgrt_synthetic_generate takes either).
 *   queries    degrees, SPD row blocks, sequence partition (greedy or
 *              METIS) and its edge cut, a locality (BFS) node order.
 *   loaders    mgrt_ogb_load, the OGB node-property-prediction raw layout.
 *
 * Conventions as in Runtime.h: C ABI, nothing throws, every fallible call
 * returns an mgrt_status (0 = MGRT_OK) and on failure writes a message to
 * `err` (when errlen > 0) and leaves its outputs empty / unspecified as
 * documented. Parallel loops run on the runtime's pool
 * (MEGAGRAPH_NUM_THREADS); results never depend on the number of threads.
 *===----------------------------------------------------------------------===*/
#ifndef MEGAGRAPH_RUNTIMEDATA_H
#define MEGAGRAPH_RUNTIMEDATA_H

#include "megagraph/Runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===-- Graph -------------------------------------------------------------===*/

/** A graph in CSR form. The out-edges of node i are the targets
 *  col_idx[e] for e in [row_ptr[i], row_ptr[i+1]); row_ptr has num_nodes+1
 *  entries (row_ptr[0] = 0, nondecreasing, row_ptr[num_nodes] = num_edges),
 *  col_idx num_edges entries in [0, num_nodes). Edges are directed: an
 *  undirected graph stores both directions. Graphs produced by this library
 *  own their arrays (tracked allocations, mgrt_alloc) and have each row
 *  sorted by target; the query functions accept any valid CSR (duplicate
 *  edges and self loops included) whatever allocated it. */
typedef struct mgrt_graph {
  int64_t num_nodes;
  int64_t num_edges;
  int64_t *row_ptr;
  int64_t *col_idx;
} mgrt_graph;

/** Releases row_ptr and col_idx (mgrt_free) and zeroes `g`; NULL is a
 *  no-op. Only for graphs whose arrays come from mgrt_alloc. */
void mgrt_graph_free(mgrt_graph *g);

/** Full O(N + E) check of the CSR contract above; MGRT_ERR_FORMAT with the
 *  row or edge at fault otherwise (MGRT_ERR_ARGUMENT for NULL / negative
 *  sizes). The other calls check only the O(1) part (pointers, sizes,
 *  row_ptr[0] and row_ptr[N]) and the entries they read. */
int mgrt_graph_check(const mgrt_graph *g, char *err, size_t errlen);

/*===-- Synthetic stochastic block model ----------------------------------===*/

/** Generates a stochastic block model graph with node features and labels
 *  from `spec`, a comma-separated list
 *      synthetic:sbm,nodes=4096,classes=8,features=16,p_in=0.02,
 *                    p_out=0.002,signal=1,seed=1
 *  (the "synthetic:" prefix is optional; keys in any order, each at most
 *  once, no spaces). Keys and defaults:
 *    nodes     N >= 1, required.
 *    classes   C in [1, N], default min(8, N). Node i is in block (= class) i %
 * C, so the blocks are interleaved, not contiguous: node ids carry no
 * structure, and partitioning has to find the blocks. features  F >= 0,
 * default 16. degree    expected degree used for the default p_in / p_out,
 * default 20: 80% of it within the block, 20% across blocks, i.e. p_in = min(1,
 * 0.8 degree / (N/C - 1)), p_out = min(1, 0.2 degree / (N - N/C)) (with C = 1:
 * p_in = min(1, degree / (N - 1))). p_in      probability of each intra-block
 * pair, in [0, 1]. p_out     probability of each inter-block pair, in [0, 1].
 *    signal    class signal strength (the SNR knob), >= 0, default 1.
 *    seed      unsigned 64-bit, default 1.
 *  Graph: every unordered pair {i, j}, i != j, is an edge independently with
 *  probability p_in (same block) or p_out; both directions are stored, no
 *  self loops, no duplicates, rows sorted. Pairs are drawn by geometric
 *  skipping (O(N + E) expected time, no O(N^2) loop), in parallel.
 *  Features: float32 [N, F], x[i] = mu[label i] + noise with noise i.i.d.
 *  standard normal and class means mu[c][f] = signal when f % C == c (else
 *  0) if F >= C; if F < C (one-hot impossible), mu[c][f] = +signal when
 *  bit f of c is set, else -signal (a binary code: distinct means while
 *  C <= 2^F). So `signal` is the per-feature mean separation in units of
 *  the noise standard deviation; signal = 0 gives pure noise.
 *  Labels: int64 [N], labels[i] = i % C.
 *  Determinism: same spec, same output, whatever the thread count (a
 *  splitmix64-seeded xoshiro256** stream per fixed chunk of work; no
 *  std:: distributions; only log / sqrt / cos of the C library, which glibc
 *  computes the same everywhere).
 *  `graph`, `features`, `labels` are overwritten (not freed first); either
 *  tensor may be NULL to skip it. Returns MGRT_ERR_ARGUMENT naming the bad
 *  key or value, MGRT_ERR_NOMEM if the graph does not fit; on failure the
 *  outputs are left empty (zeroed). */
int mgrt_sbm_generate(const char *spec, mgrt_graph *graph,
                      mgrt_tensor *features, mgrt_tensor *labels, char *err,
                      size_t errlen);

/*===-- Synthetic power-law graph (R-MAT) ---------------------------------===*/

/** Generates an R-MAT graph (Chakrabarti, Zhan and Faloutsos 2004: skewed,
 *  power-law degrees like web and social graphs) with label-correlated
 *  node features from `spec`, a comma-separated list
 *      synthetic:rmat,nodes=65536,edges=524288,classes=8,features=16,
 *                     a=0.57,b=0.19,c=0.19,signal=1,seed=1
 *  (the "synthetic:" prefix is optional; keys in any order, each at most
 *  once, no spaces). Keys and defaults:
 *    nodes     N >= 1, required.
 *    edges     E >= 0, the number of undirected edges, default 8 N (mean
 *              degree 16); at most N (N - 1) / 4 (half of all pairs).
 *    classes   C in [1, N], default min(8, N).
 *    features  F >= 0, default 16.
 *    a, b, c   the probabilities of the quadrants (0,0), (0,1), (1,0) of
 *              each recursion level; d = 1 - a - b - c >= 0. Defaults
 *              0.57, 0.19, 0.19 (Graph500's).
 *    signal    class signal strength of the features, >= 0, default 1.
 *    seed      unsigned 64-bit, default 1.
 *  Graph: an edge draw descends ceil(log2 N) levels of the adjacency
 *  matrix, picking a quadrant per level; draws outside [0, N)^2 or on the
 *  diagonal are redrawn. Draws repeat, in rounds, until E distinct
 *  unordered pairs exist: exactly E undirected edges, both directions
 *  stored (num_edges = 2 E), no self loops, no duplicates, rows sorted.
 *  Classes: the R-MAT id range is cut into C equal runs, class = run of the
 *  id (ids that share their high bits share a class: since a + d > b + c
 *  pairs in the same quadrant are likelier, the classes are homophilous,
 *  and class 0 holds the hubs). Node ids are then shuffled (a seeded
 *  permutation), so ids carry neither degree nor class.
 *  Features: float32 [N, F], the class mean plus i.i.d. standard normal
 *  noise, as mgrt_sbm_generate's (one-hot means of size `signal` when
 *  F >= C, else a +-signal binary code of the class).
 *  Labels: int64 [N].
 *  Determinism: same spec, same output, whatever the thread count.
 *  Outputs as mgrt_sbm_generate's; MGRT_ERR_ARGUMENT names a bad key or
 *  value, MGRT_ERR_NOMEM when the graph does not fit. */
int mgrt_rmat_generate(const char *spec, mgrt_graph *graph,
                       mgrt_tensor *features, mgrt_tensor *labels, char *err,
                       size_t errlen);

/** mgrt_sbm_generate or mgrt_rmat_generate, by the generator the spec
 *  names ("synthetic:sbm,..." / "synthetic:rmat,..."); an unknown name is
 *  MGRT_ERR_ARGUMENT listing both. */
int mgrt_synthetic_generate(const char *spec, mgrt_graph *graph,
                            mgrt_tensor *features, mgrt_tensor *labels,
                            char *err, size_t errlen);

/*===-- Queries -----------------------------------------------------------===*/

/** Allocates and fills int64 [N] tensors: in_degree[j] = number of edges
 *  into j, out_degree[i] = row_ptr[i+1] - row_ptr[i] (duplicates and self
 *  loops count). Either output may be NULL. For an undirected graph both are
 *  the degree. */
int mgrt_graph_degrees(const mgrt_graph *g, mgrt_tensor *in_degree,
                       mgrt_tensor *out_degree, char *err, size_t errlen);

/** Shortest-path distances in the subgraph induced by `nodes` (S =
 *  num_nodes distinct node ids of g, the sequence in its order), for the
 *  rows [row_begin, row_end) of the S x S distance matrix only (the row
 *  block a context-parallel rank owns):
 *    out[(r - row_begin) * S + c] = min(max_distance, d(nodes[r], nodes[c]))
 *  where d counts edges of a shortest directed path from nodes[r] to
 *  nodes[c] through sequence nodes only (edges leaving the sequence are
 *  ignored), d(x, x) = 0, and an unreachable node gets max_distance.
 *  max_distance >= 0 (0 makes everything 0). `out` is
 *  [(row_end - row_begin), S] int64, row-major, written entirely.
 *  0 <= row_begin <= row_end <= S. The rows' BFS run 64 at a time,
 *  bit-parallel, blocks of 64 rows spread over the pool; working memory is
 *  the induced subgraph plus three words of 64 bits per position and
 *  thread, never S x S. Any row block gives the same rows as the
 *  full matrix. Duplicate or out-of-range ids are MGRT_ERR_ARGUMENT. */
int mgrt_spd_block(const mgrt_graph *g, const int64_t *nodes, int64_t num_nodes,
                   int64_t row_begin, int64_t row_end, int64_t max_distance,
                   int64_t *out, char *err, size_t errlen);

/** Writes into order[0, N) a permutation of the nodes of g grouping them
 *  into sequences of seq_len well-connected nodes: sequence s is
 *  order[s * seq_len, min(N, (s + 1) * seq_len)) (the last one is shorter
 *  when seq_len does not divide N). Greedy graph growing over out-edges,
 *  O(E log E): a sequence starts from a seed (the best candidate left by
 *  the previous sequence, else the smallest unassigned id) and repeatedly
 *  takes the unassigned node with the most edges into it, ties in
 *  discovery (BFS) order, until it holds seq_len nodes; when its
 *  component runs out it continues from a new seed. Deterministic,
 *  single-threaded; a fallback for mgrt_partition_metis (below), which
 *  cuts far fewer edges. Directed graphs should be symmetrized first.
 *  seq_len >= 1. */
int mgrt_partition_sequences(const mgrt_graph *g, int64_t seq_len,
                             int64_t *order, char *err, size_t errlen);

/** The same contract as mgrt_partition_sequences (order[0, N) a
 *  permutation; sequence s = order[s * seq_len, min(N, (s + 1) * seq_len)),
 *  the last one shorter when seq_len does not divide N), with the sequences
 *  made by METIS (METIS_PartGraphKway, minimizing the edge cut) on the
 *  symmetrized graph (self loops and duplicate edges dropped): k =
 *  ceil(N / seq_len) parts with target sizes seq_len (the last one the
 *  remainder), then made exact: each overfull part gives up its nodes with
 *  the fewest edges inside it, and each such node joins the underfull part
 *  holding most of its neighbours (the first underfull part if none).
 *  Sequence s is part s, nodes in increasing id. `seed` seeds METIS
 *  (METIS_OPTION_SEED); deterministic for a given seed. N and the number of
 *  edges must fit in 32 bits (MGRT_ERR_UNSUPPORTED otherwise); METIS
 *  failures are MGRT_ERR_NOMEM (memory) or MGRT_ERR_ARGUMENT. */
int mgrt_partition_metis(const mgrt_graph *g, int64_t seq_len, uint64_t seed,
                         int64_t *order, char *err, size_t errlen);

/** mgrt_partition_metis with given part sizes: `nparts` parts, part p of
 *  exactly sizes[p] >= 0 nodes (the sizes sum to N; MGRT_ERR_ARGUMENT
 *  otherwise), METIS's target part weights sizes[p] / N, the same repair.
 *  order[first_p, first_p + sizes[p]) is part p (first_p the sum of the
 *  sizes before it), nodes in increasing id. */
int mgrt_partition_metis_sizes(const mgrt_graph *g, int64_t nparts,
                               const int64_t *sizes, uint64_t seed,
                               int64_t *order, char *err, size_t errlen);

/** Edge cut of a sequence partition: the number of directed edges (u, v)
 *  of g, u != v, whose endpoints lie in different sequences of `order` (a
 *  permutation of the N nodes, sequence s = order[s * seq_len, ...) as
 *  above). MGRT_ERR_ARGUMENT if order is not a permutation. */
int mgrt_partition_edge_cut(const mgrt_graph *g, const int64_t *order,
                            int64_t seq_len, int64_t *cut, char *err,
                            size_t errlen);

/** Writes into order[0, N) a locality order of the nodes of g (order[k] is
 *  the node at position k, a permutation): breadth-first search over the
 *  out-edges, each search started from the node with the most edges among
 *  those not yet reached (ties: the smallest id), neighbours taken in
 *  their row's order; nodes without an edge to another node (self loops
 *  aside) come last, in increasing id. So a node's neighbours sit in its
 *  own or the adjacent BFS levels, and the hubs first: the node
 *  renumbering of a pipeline that aggregates a row once the chunks of its
 *  neighbours are done (MixGCN). O(N + E), deterministic,
 *  single-threaded. Directed graphs should be symmetrized first. */
int mgrt_order_locality(const mgrt_graph *g, int64_t *order, char *err,
                        size_t errlen);

/*===-- OGB node-property-prediction datasets -----------------------------===*/

/** Split membership of a node (mgrt_ogb_load's `split` tensor). */
enum {
  MGRT_SPLIT_NONE = 0,
  MGRT_SPLIT_TRAIN = 1,
  MGRT_SPLIT_VALID = 2,
  MGRT_SPLIT_TEST = 3
};

/** Loads a dataset in the raw layout of OGB node property prediction
 *  (e.g. the unpacked ogbn-arxiv.zip), every file gzip-compressed CSV
 *  without header (read with zlib):
 *    DIR/raw/edge.csv.gz          one "src,dst" line per edge, ids in [0, N)
 *                                 (at least one line)
 *    DIR/raw/node-feat.csv.gz     N lines of F comma-separated finite floats
 *    DIR/raw/node-label.csv.gz    N lines with one class id (an integer, or
 *                                 a float with integral value as ogbn-papers
 *                                 writes it); "nan" or an empty line is an
 *                                 unlabelled node (label -1)
 *    DIR/raw/num-node-list.csv.gz optional: N (checked against the others)
 *    DIR/split/SCHEME/{train,valid,test}.csv.gz  one node id per line
 *                                 (valid optional)
 *  `split_scheme` names SCHEME; NULL or "" takes the only subdirectory of
 *  DIR/split (an error listing them if there are several).
 *  Outputs: `graph` the undirected graph (both directions of every edge,
 *  self loops and duplicates dropped, rows sorted: OGB's to_undirected),
 *  `features` f32 [N, F], `labels` i64 [N] (-1 = unlabelled), `split` u8
 *  [N] (MGRT_SPLIT_*); any tensor may be NULL to skip it. A missing file,
 *  a malformed line (named with file and line number), an id out of range,
 *  inconsistent row counts or a node in two splits is MGRT_ERR_IO /
 *  MGRT_ERR_FORMAT with a message naming the file; on failure the outputs
 *  are left empty (zeroed). */
int mgrt_ogb_load(const char *dir, const char *split_scheme, mgrt_graph *graph,
                  mgrt_tensor *features, mgrt_tensor *labels,
                  mgrt_tensor *split, char *err, size_t errlen);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEGAGRAPH_RUNTIMEDATA_H */
