//===- StateLayoutTest.cpp - The state's logical tensors per plan ---------===//
//
// driver/StateLayout.h on state tables written by hand: a one-process
// table maps each global to itself; a ZeRO-3 table maps each parameter and
// each of its moments into the packed buckets at the parameter's offset,
// sharded over the ranks; a pipelined table names the rank of the stage
// whose update takes each parameter's gradient; ZeRO-1/2 shard only the
// moments, over the ranks of the bucket's stage. A pipeline rank's view of
// the state holds its stage's tensors in per-rank storage.
// The manifest line round-trips.
//
//===----------------------------------------------------------------------===//

#include "driver/StateLayout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace mgrt;

namespace {

mgrt_state_info state(const char *name, int kind, std::vector<int64_t> shape,
                      void *data, int dtype = MGRT_F32, int bucket = -1,
                      int64_t offset = 0) {
  mgrt_state_info s{};
  s.tensor.name = name;
  s.tensor.dtype = dtype;
  s.tensor.rank = static_cast<int>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    s.tensor.shape[d] = shape[d];
  s.tensor.index = -1;
  s.kind = kind;
  s.bucket = bucket;
  s.offset = offset;
  s.data = data;
  return s;
}

float storage[64];

TEST(StateLayout, OneProcessIsTheTableItself) {
  const mgrt_state_info table[] = {
      state("w", MGRT_STATE_PARAMETER, {3, 2}, storage),
      state("gt.step", MGRT_STATE_OPTIMIZER, {}, storage),
      state("w.adam_m", MGRT_STATE_OPTIMIZER, {3, 2}, storage)};
  mgrt_model_info model{};
  model.num_state = 3;
  model.state = table;
  StateLayout layout;
  std::string error;
  ASSERT_TRUE(computeStateLayout(model, layout, error)) << error;
  ASSERT_EQ(layout.tensors.size(), 3u);
  EXPECT_EQ(layout.tensors[2].name, "w.adam_m");
  EXPECT_EQ(layout.tensors[2].fileOffset, 6 * 4 + 4);
  EXPECT_EQ(layout.tensors[2].rank, 0);
  EXPECT_EQ(layout.readyFlag, -1);
}

TEST(StateLayout, ZeroThreeUnpacksTheBuckets) {
  int32_t ready = 0;
  const mgrt_plan plan = {2, 1, 1, 1, 3, 0, MGRT_CP_ALLGATHER, "dp=2,zero=3"};
  // Bucket 0 packs a [2, 2] and a [3]: 7 elements, padded to 8, 4 a rank.
  const mgrt_state_info table[] = {
      state("a", MGRT_STATE_PARAMETER, {2, 2}, storage, MGRT_F32, 2, 0),
      state("b", MGRT_STATE_PARAMETER, {3}, storage, MGRT_F32, 2, 4),
      state("gt.zero.bucket0", MGRT_STATE_OTHER, {4}, storage),
      state("gt.zero.bucket0.adam_v", MGRT_STATE_OPTIMIZER, {4}, storage),
      state(MGRT_STATE_ZERO_READY, MGRT_STATE_OTHER, {}, &ready, MGRT_I32)};
  mgrt_model_info model{};
  model.plan = &plan;
  model.num_state = 5;
  model.state = table;
  StateLayout layout;
  std::string error;
  ASSERT_TRUE(computeStateLayout(model, layout, error)) << error;
  ASSERT_EQ(layout.tensors.size(), 4u);
  const LogicalTensor &bv = layout.tensors[3];
  EXPECT_EQ(bv.name, "b.adam_v");
  EXPECT_EQ(bv.kind, MGRT_STATE_OPTIMIZER);
  EXPECT_EQ(bv.shape, std::vector<int64_t>({3}));
  EXPECT_EQ(bv.rank, -1);
  EXPECT_EQ(bv.offset, 4);
  EXPECT_EQ(bv.storageElems, 4);
  EXPECT_EQ(bv.fileOffset, 16); // after the parameter bucket
  EXPECT_EQ(layout.tensors[0].name, "a");
  EXPECT_EQ(layout.tensors[0].kind, MGRT_STATE_PARAMETER);
  EXPECT_EQ(layout.readyFlag, 4);
}

TEST(StateLayout, PipelineNamesTheOwningStage) {
  const mgrt_plan plan = {1, 2, 1, 2, 0, 0, MGRT_CP_ALLGATHER, "pp=2,mb=2"};
  const mgrt_tensor_info grads[] = {{"grad:w1", MGRT_F32, 1, {2}, 0, -1},
                                    {"grad:w2", MGRT_F32, 1, {2}, 0, -1}};
  const mgrt_entry_info entries[] = {
      {"s0.update", 1, &grads[0], 0, nullptr, nullptr},
      {"s1.update", 1, &grads[1], 0, nullptr, nullptr}};
  const mgrt_state_info table[] = {
      state("w1", MGRT_STATE_PARAMETER, {2}, storage),
      state("w2", MGRT_STATE_PARAMETER, {2}, storage),
      state("gt.step", MGRT_STATE_OPTIMIZER, {}, storage),
      state("w2.adam_m", MGRT_STATE_OPTIMIZER, {2}, storage)};
  mgrt_model_info model{};
  model.plan = &plan;
  model.num_entries = 2;
  model.entries = entries;
  model.num_state = 4;
  model.state = table;
  StateLayout layout;
  std::string error;
  ASSERT_TRUE(computeStateLayout(model, layout, error)) << error;
  ASSERT_EQ(layout.tensors.size(), 4u);
  EXPECT_EQ(layout.tensors[0].rank, 0);
  EXPECT_EQ(layout.tensors[1].rank, 1);
  EXPECT_EQ(layout.tensors[2].rank, 0);
  EXPECT_EQ(layout.tensors[3].rank, 1);
}

TEST(StateLayout, ZeroOneShardsOnlyTheMoments) {
  const mgrt_plan plan = {2, 1, 1, 1, 1, 0, MGRT_CP_ALLGATHER, "dp=2,zero=1"};
  // The bucket has no storage: the parameters stay whole, their moments
  // are packed (a [2, 2] and a [3], padded to 8: 4 a rank).
  const mgrt_state_info table[] = {
      state("a", MGRT_STATE_PARAMETER, {2, 2}, storage, MGRT_F32, 2, 0),
      state("b", MGRT_STATE_PARAMETER, {3}, storage, MGRT_F32, 2, 4),
      state("gt.zero.bucket0", MGRT_STATE_OTHER, {4}, nullptr),
      state("gt.zero.bucket0.adam_m", MGRT_STATE_OPTIMIZER, {4}, storage)};
  mgrt_model_info model{};
  model.plan = &plan;
  model.num_state = 4;
  model.state = table;
  EXPECT_TRUE(isSavedState(model, table[0]));
  EXPECT_FALSE(isSavedState(model, table[2]));
  EXPECT_FALSE(inBucketStorage(model, table[0]));
  StateLayout layout;
  std::string error;
  ASSERT_TRUE(computeStateLayout(model, layout, error)) << error;
  ASSERT_EQ(layout.tensors.size(), 4u);
  EXPECT_EQ(layout.tensors[0].name, "a");
  EXPECT_EQ(layout.tensors[0].rank, 0);
  EXPECT_TRUE(layout.tensors[0].shards.empty());
  EXPECT_EQ(layout.tensors[1].fileOffset, 16);
  const LogicalTensor &bm = layout.tensors[3];
  EXPECT_EQ(bm.name, "b.adam_m");
  EXPECT_EQ(bm.kind, MGRT_STATE_OPTIMIZER);
  EXPECT_EQ(bm.shards, std::vector<int>({0, 1}));
  EXPECT_EQ(bm.offset, 4);
  EXPECT_EQ(bm.storageElems, 4);
  EXPECT_EQ(bm.fileOffset, 28); // after a and b
  EXPECT_EQ(layout.readyFlag, -1);
}

TEST(StateLayout, PipelinedZeroShardsOverTheStagesRanks) {
  // dp=2 x pp=2: stage 1 is ranks 1 and 3. Its bucket `gt.zero.s1.bucket0`
  // (the update entry takes its gradient) packs w2.
  const mgrt_plan plan = {
      2, 2, 1, 2, 2, 0, MGRT_CP_ALLGATHER, "dp=2,pp=2,mb=2,zero=2"};
  const mgrt_tensor_info grads[] = {
      {"grad:gt.zero.s0.bucket0", MGRT_F32, 1, {1}, 0, -1},
      {"grad:gt.zero.s1.bucket0", MGRT_F32, 1, {1}, 0, -1}};
  const mgrt_entry_info entries[] = {
      {"s0.update", 1, &grads[0], 0, nullptr, nullptr},
      {"s1.update", 1, &grads[1], 0, nullptr, nullptr}};
  const mgrt_state_info table[] = {
      state("w1", MGRT_STATE_PARAMETER, {2}, storage, MGRT_F32, 3, 0),
      state("w2", MGRT_STATE_PARAMETER, {2}, storage, MGRT_F32, 4, 0),
      state("gt.step", MGRT_STATE_OPTIMIZER, {}, storage),
      state("gt.zero.s0.bucket0", MGRT_STATE_OTHER, {1}, nullptr),
      state("gt.zero.s1.bucket0", MGRT_STATE_OTHER, {1}, nullptr),
      state("gt.zero.s1.bucket0.adam_v", MGRT_STATE_OPTIMIZER, {1}, storage)};
  mgrt_model_info model{};
  model.plan = &plan;
  model.num_entries = 2;
  model.entries = entries;
  model.num_state = 6;
  model.state = table;
  StateLayout layout;
  std::string error;
  ASSERT_TRUE(computeStateLayout(model, layout, error)) << error;
  ASSERT_EQ(layout.tensors.size(), 4u);
  EXPECT_EQ(layout.tensors[0].rank, 0); // w1: stage 0
  EXPECT_EQ(layout.tensors[1].rank, 1); // w2: stage 1
  EXPECT_EQ(layout.tensors[3].name, "w2.adam_v");
  EXPECT_EQ(layout.tensors[3].shards, std::vector<int>({1, 3}));
}

TEST(StateLayout, EachPipelineRankHoldsItsStagesState) {
  // dp=2 x pp=2, zero=1: the updates take each parameter's gradient; the
  // moments are packed per stage (`gt.zero.s<k>.bucket0.adam_m`), the
  // buckets have no storage; the step counter is every stage's.
  const mgrt_plan plan = {
      2, 2, 1, 2, 1, 0, MGRT_CP_ALLGATHER, "dp=2,pp=2,mb=2,zero=1"};
  const mgrt_tensor_info grads[] = {{"grad:w1", MGRT_F32, 1, {2}, 0, -1},
                                    {"grad:w2", MGRT_F32, 1, {2}, 0, -1}};
  const mgrt_entry_info entries[] = {
      {"s0.update", 1, &grads[0], 0, nullptr, nullptr},
      {"s1.update", 1, &grads[1], 0, nullptr, nullptr}};
  static float w1[2] = {1, 2}, w2[2] = {3, 4}, step[1] = {0}, m0[1] = {0},
               m1[1] = {5};
  const mgrt_state_info table[] = {
      state("w1", MGRT_STATE_PARAMETER, {2}, w1, MGRT_F32, 3, 0),
      state("w2", MGRT_STATE_PARAMETER, {2}, w2, MGRT_F32, 4, 0),
      state("gt.step", MGRT_STATE_OPTIMIZER, {}, step),
      state("gt.zero.s0.bucket0", MGRT_STATE_OTHER, {1}, nullptr),
      state("gt.zero.s1.bucket0", MGRT_STATE_OTHER, {1}, nullptr),
      state("gt.zero.s0.bucket0.adam_m", MGRT_STATE_OPTIMIZER, {1}, m0),
      state("gt.zero.s1.bucket0.adam_m", MGRT_STATE_OPTIMIZER, {1}, m1)};
  static mgrt_model_info model{};
  model.plan = &plan;
  model.num_entries = 2;
  model.entries = entries;
  model.num_state = 7;
  model.state = table;
  EXPECT_EQ(stateStages(model), std::vector<int>({0, 1, -1, 0, 1, 0, 1}));
  EXPECT_EQ(heldStateBytes(model), 28u); // not localised: everything
  // Stage 1's view: w2, its moments and the counter in storage of this
  // process (copies of the static globals' bytes, the ones the compiled
  // code's mgrt_stage_global calls get), stage 0's left static.
  const mgrt_model_info &local = localStateModel(model, 1);
  ASSERT_NE(&local, &model);
  EXPECT_EQ(&localStateModel(model, 1), &local); // built once
  EXPECT_FALSE(holdsState(local, 0));
  EXPECT_TRUE(holdsState(local, 1));
  EXPECT_TRUE(holdsState(local, 2));
  EXPECT_FALSE(holdsState(local, 5));
  EXPECT_TRUE(holdsState(local, 6));
  EXPECT_EQ(local.state[0].data, static_cast<void *>(w1));
  EXPECT_EQ(local.state[1].data, mgrt_stage_global_find(w2));
  EXPECT_NE(local.state[1].data, static_cast<void *>(w2));
  EXPECT_EQ(static_cast<float *>(local.state[1].data)[1], 4.0f);
  EXPECT_EQ(local.state[6].data, mgrt_stage_global_find(m1));
  EXPECT_EQ(mgrt_stage_global_find(w1), nullptr);
  EXPECT_EQ(mgrt_stage_global_find(m0), nullptr);
  EXPECT_EQ(heldStateBytes(local), 16u); // w2, the counter, w2's moment
  // Writes go to this rank's storage; the static initial values stay.
  static_cast<float *>(local.state[1].data)[0] = 7;
  EXPECT_EQ(w2[0], 3.0f);
}

TEST(StateLayout, ABucketTooSmallIsRefused) {
  const mgrt_plan plan = {2, 1, 1, 1, 1, 0, MGRT_CP_ALLGATHER, "dp=2,zero=1"};
  // 3 elements at offset 4 need 7; 2 ranks of 3 hold 6.
  const mgrt_state_info table[] = {
      state("b", MGRT_STATE_PARAMETER, {3}, storage, MGRT_F32, 1, 4),
      state("gt.zero.bucket0", MGRT_STATE_OTHER, {3}, nullptr),
      state("gt.zero.bucket0.adam_m", MGRT_STATE_OPTIMIZER, {3}, storage)};
  mgrt_model_info model{};
  model.plan = &plan;
  model.num_state = 3;
  model.state = table;
  StateLayout layout;
  std::string error;
  EXPECT_FALSE(computeStateLayout(model, layout, error));
  EXPECT_NE(error.find("cannot hold 'b.adam_m'"), std::string::npos) << error;
}

TEST(StateLayout, ManifestLineRoundTrips) {
  LogicalTensor t;
  t.name = "layers.0 odd name.adam_m";
  t.kind = MGRT_STATE_OPTIMIZER;
  t.dtype = MGRT_F32;
  t.shape = {4, 0, 2};
  t.fileOffset = 96;
  t.storageElems = 12;
  t.rank = -1;
  t.shards = {1, 3};
  t.offset = 5;
  const std::string line = formatLogical(t);
  ASSERT_EQ(line.rfind("logical ", 0), 0u);
  LogicalTensor u;
  ASSERT_TRUE(parseLogical(line.substr(8), u)) << line;
  EXPECT_EQ(u.name, t.name);
  EXPECT_EQ(u.shape, t.shape);
  EXPECT_EQ(u.fileOffset, 96);
  EXPECT_EQ(u.storageElems, 12);
  EXPECT_EQ(u.rank, -1);
  EXPECT_EQ(u.shards, t.shards);
  EXPECT_EQ(u.offset, 5);
  // One shard, and one rank's whole tensor.
  t.shards = {2};
  ASSERT_TRUE(parseLogical(formatLogical(t).substr(8), u));
  EXPECT_EQ(u.shards, std::vector<int>({2}));
  t.shards.clear();
  t.rank = 2;
  ASSERT_TRUE(parseLogical(formatLogical(t).substr(8), u));
  EXPECT_EQ(u.rank, 2);
  EXPECT_TRUE(u.shards.empty());
  // An older manifest's -1: sharded over the whole job (the reader fills
  // in the ranks).
  ASSERT_TRUE(parseLogical("2 1 0 4 -1 0 1 3 w.adam_m", u));
  EXPECT_EQ(u.rank, -1);
  EXPECT_TRUE(u.shards.empty());
  EXPECT_FALSE(parseLogical("1 1 0 4 0 0 2 3", u));  // a dim and no name
  EXPECT_FALSE(parseLogical("1 99 0 4 0 0 0 w", u)); // no such dtype
  EXPECT_FALSE(parseLogical("1 1 0 4 0,x, 0 0 w", u));
  EXPECT_FALSE(parseLogical("1 1 0 4 -2 0 0 w", u));
  EXPECT_FALSE(parseLogical("1 1 0 4 1x 0 0 w", u));
}

} // namespace
