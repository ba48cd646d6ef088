//===- GradientBuckets.h - The gradient bucket size ------------*- C++ -*-===//
//
// Part of MegaGraph. What gt-data-parallel (its `bucket-bytes` default) and
// the plan search's cost model (how many collectives a step's gradients
// take) agree on.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_PASSES_GRADIENTBUCKETS_H
#define MEGAGRAPH_PASSES_GRADIENTBUCKETS_H

#include <cstdint>

namespace megagraph {

/// The largest gradient bucket gt-data-parallel packs several gradients
/// into (bytes); a gradient at least that large travels alone.
inline constexpr int64_t kGradientBucketBytes = 4 << 20;

} // namespace megagraph

#endif // MEGAGRAPH_PASSES_GRADIENTBUCKETS_H
