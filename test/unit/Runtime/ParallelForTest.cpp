//===- ParallelForTest.cpp - mgrt_parallel_for, the generated loops' pool -===//

#include "megagraph/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

namespace {

/// The ranges one call handed out, and how often each iteration ran.
struct Record {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::vector<std::atomic<int>> visits;
  explicit Record(int64_t n) : visits(static_cast<size_t>(n)) {}
};

void recordRange(void *ctx, int64_t begin, int64_t end) {
  auto *r = static_cast<Record *>(ctx);
  {
    std::lock_guard<std::mutex> lock(r->mutex);
    r->ranges.push_back({begin, end});
  }
  for (int64_t i = begin; i < end; ++i)
    r->visits[static_cast<size_t>(i)].fetch_add(1);
}

TEST(ParallelFor, EveryIterationOnceInRangesOfAtLeastGrain) {
  for (int64_t n : {1, 2, 3, 7, 64, 1000, 4096, 100003}) {
    for (int64_t grain : {0, 1, 5, 64, 1 << 20}) {
      Record r(n);
      mgrt_parallel_for(recordRange, &r, n, grain);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(r.visits[static_cast<size_t>(i)].load(), 1)
            << "n " << n << " grain " << grain << " iteration " << i;
      std::sort(r.ranges.begin(), r.ranges.end());
      ASSERT_FALSE(r.ranges.empty());
      EXPECT_EQ(r.ranges.front().first, 0);
      EXPECT_EQ(r.ranges.back().second, n);
      for (size_t k = 0; k < r.ranges.size(); ++k) {
        auto [b, e] = r.ranges[k];
        EXPECT_LT(b, e) << "an empty range";
        if (k + 1 < r.ranges.size()) {
          EXPECT_EQ(e, r.ranges[k + 1].first) << "ranges are contiguous";
          EXPECT_GE(e - b, std::max<int64_t>(grain, 1))
              << "n " << n << " grain " << grain;
        }
      }
      if (grain >= n) {
        EXPECT_EQ(r.ranges.size(), 1u) << "one range when grain covers n";
      }
    }
  }
}

TEST(ParallelFor, NothingToDo) {
  Record r(1);
  mgrt_parallel_for(recordRange, &r, 0, 1);
  mgrt_parallel_for(recordRange, &r, -5, 1);
  EXPECT_TRUE(r.ranges.empty());
}

/// A range whose body calls mgrt_parallel_for again: the inner call runs
/// on the calling worker, as one range.
struct Nested {
  std::atomic<int> innerCalls{0};
  std::atomic<int64_t> innerIterations{0};
};

void innerBody(void *ctx, int64_t begin, int64_t end) {
  auto *n = static_cast<Nested *>(ctx);
  n->innerCalls.fetch_add(1);
  n->innerIterations.fetch_add(end - begin);
}

void outerBody(void *ctx, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    mgrt_parallel_for(innerBody, ctx, 100, 1);
}

TEST(ParallelFor, NestedCallRunsOnTheCaller) {
  Nested n;
  mgrt_parallel_for(outerBody, &n, 8, 1);
  EXPECT_EQ(n.innerIterations.load(), 800);
  // Nested calls from inside the pool are one range each; a range the
  // calling thread ran outside the pool may split.
  EXPECT_GE(n.innerCalls.load(), 8);
}

} // namespace
