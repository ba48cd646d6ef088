//===- AttentionSmallHead.h - Attention forward for narrow heads -*- C++
//-*-===//
//
// Internal to the runtime. attentionForward (Attention.cpp) hands a call to
// this path when its heads are narrow (dh, dvh in {8, 16, 32}) and its scores
// have no dense bias and no mask, only (optionally) the spatial bias of a
// table of at most 32 rows: Graphormer's attention. See
// AttentionSmallHead.cpp for how it differs from the blockwise kernel.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_KERNELS_ATTENTIONSMALLHEAD_H
#define MEGAGRAPH_RUNTIME_KERNELS_ATTENTIONSMALLHEAD_H

#include "kernels/AttentionBlock.h"

namespace mgrt {

/// Whether runSmallHeadAttention can run `p` (its shape, bias, mask and
/// spatial fields filled). MEGAGRAPH_ATTENTION_SMALL_HEAD in the
/// environment: "0" turns the path off (A/B runs, tests of the other path),
/// "1" on at every level (also without AVX2), "v3" / "baseline" on with
/// that build of the body (the AVX2 8-lane body, the portable 16-lane
/// one; tests). Unset: on with AVX2 or AVX-512.
bool smallHeadApplies(const AttentionProblem &p);

/// The whole forward of `p` (out, and lse when p.lse is set) on the pool.
/// Memory beyond the operands: a packed copy of k and v, and per worker a
/// [Sk][16]-byte index tile when the scores have a spatial bias.
void runSmallHeadAttention(const AttentionProblem &p);

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_KERNELS_ATTENTIONSMALLHEAD_H
