// Illegal schedules: each raises a ValueError naming the stage and the axis.
#include "anvil/te/schedule.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/te/lower.h"
#include "anvil/te/reduction.h"

namespace anvil::te {
namespace {

// Runs f, expecting an anvil::Error of kind ValueError whose message contains every needle.
template <typename F>
void expect_value_error(F f, std::initializer_list<const char*> needles) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
    for (const char* n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

struct MatmulGraph {
  Tensor A = placeholder({8, 8}, DataType::float32(), "A");
  Tensor B = placeholder({8, 8}, DataType::float32(), "B");
  IterVar k = reduce_axis(0, 8, "k");
  Tensor C = compute(
      {8, 8}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Tensor D = compute(
      {8, 8}, [&](Var i, Var j) { return C(i, j) * 2.0f; }, "D");
};

TEST(TeSchedule, SplittingAnAxisTwiceNamesStageAndAxis) {
  MatmulGraph g;
  Schedule s = create_schedule({g.D});
  s[g.D].split(g.D.axis(0), 4);
  expect_value_error([&] { s[g.D].split(g.D.axis(0), 2); }, {"stage 'D'", "axis 'i'", "already split"});
}

TEST(TeSchedule, ReorderingAxesOfAnotherStageIsRejected) {
  MatmulGraph g;
  Schedule s = create_schedule({g.D});
  expect_value_error([&] { s[g.D].reorder(g.D.axis(1), g.C.axis(0)); }, {"stage 'D'", "axis 'i'", "does not belong"});
  expect_value_error([&] { s[g.D].reorder(g.D.axis(1), g.D.axis(1)); }, {"stage 'D'", "more than once"});
}

TEST(TeSchedule, VectorizingOrParallelizingAReductionAxisIsRejected) {
  MatmulGraph g;
  Schedule s = create_schedule({g.D});
  expect_value_error([&] { s[g.C].vectorize(g.k); }, {"stage 'C'", "reduction axis 'k'"});
  expect_value_error([&] { s[g.C].parallel(g.k); }, {"stage 'C'", "reduction axis 'k'"});
  expect_value_error([&] { s[g.C].bind(g.k, "threadIdx.x"); }, {"stage 'C'", "reduction axis 'k'"});
}

TEST(TeSchedule, ComputeAtToANonConsumerIsRejected) {
  MatmulGraph g;
  Tensor E = compute(
      {8, 8}, [&](Var i, Var j) { return g.A(i, j) + 1.0f; }, "E");
  Schedule s = create_schedule({g.D, E});
  expect_value_error([&] { s[g.C].compute_at(s[E], E.axis(0)); }, {"stage 'C'", "stage 'E'", "does not read 'C'"});
  expect_value_error([&] { s[g.C].compute_at(s[g.D], E.axis(0)); }, {"stage 'C'", "not a leaf axis of stage 'D'"});
}

TEST(TeSchedule, InliningAReductionOrAnOutputIsRejected) {
  MatmulGraph g;
  Schedule s = create_schedule({g.D});
  expect_value_error([&] { s[g.C].compute_inline(); }, {"stage 'C'", "reduction"});
  expect_value_error([&] { s[g.D].compute_inline(); }, {"stage 'D'", "output"});
}

TEST(TeSchedule, FuseNeedsAdjacentAxesOfOneKind) {
  MatmulGraph g;
  Schedule s = create_schedule({g.D});
  expect_value_error([&] { s[g.C].fuse(g.C.axis(0), g.k); }, {"stage 'C'", "not adjacent"});
  expect_value_error([&] { s[g.C].fuse(g.C.axis(1), g.k); }, {"stage 'C'", "reduction axis"});
  IterVar f = s[g.C].fuse(g.C.axis(0), g.C.axis(1));
  EXPECT_EQ(f->name(), "i.j.fused");
}

TEST(TeSchedule, BadFactorsTagsAndScopesAreRejected) {
  MatmulGraph g;
  Schedule s = create_schedule({g.D});
  expect_value_error([&] { s[g.D].split(g.D.axis(0), 0); }, {"stage 'D'", "axis 'i'", "positive"});
  expect_value_error([&] { s[g.D].bind(g.D.axis(0), "warpIdx.x"); }, {"stage 'D'", "axis 'i'", "warpIdx.x"});
  expect_value_error([&] { s[g.C].set_scope("texture"); }, {"stage 'C'", "texture"});
  expect_value_error([&] { s[g.C].storage_align(g.k, 8, 1); }, {"stage 'C'", "axis 'k'"});
  expect_value_error([&] { s.cache_read(g.A, "shared", {g.D}); }, {"'A'", "stage 'D' does not read"});
}

TEST(TeSchedule, BindingTwoAxesToOneThreadTagIsRejected) {
  MatmulGraph g;
  Schedule s = create_schedule({g.D});
  s[g.D].bind(g.D.axis(0), "threadIdx.x");
  expect_value_error([&] { s[g.D].bind(g.D.axis(1), "threadIdx.x"); }, {"stage 'D'", "axis 'j'", "axis 'i'"});
}

TEST(TeSchedule, AnnotatingAnAxisTwoWaysIsRejected) {
  MatmulGraph g;
  Schedule s = create_schedule({g.D});
  s[g.D].parallel(g.D.axis(0));
  expect_value_error([&] { s[g.D].vectorize(g.D.axis(0)); }, {"stage 'D'", "axis 'i'", "already parallel"});
  expect_value_error([&] { s[g.D].split(g.D.axis(0), 2); }, {"stage 'D'", "axis 'i'", "annotated"});
}

TEST(TeSchedule, NestedReductionAndWrongArityAreClearErrors) {
  Tensor A = placeholder({4, 4}, DataType::float32(), "A");
  IterVar k = reduce_axis(0, 4, "k");
  expect_value_error(
      [&] {
        compute(
            {4}, [&](Var i) { return sum(A(i, k), {k}) * 2.0f; }, "S");
      },
      {"compute 'S'", "reduction (sum)", "whole body"});
  expect_value_error(
      [&] {
        compute(
            {4, 4}, [&](Var i) { return A(i, i); }, "T");
      },
      {"compute 'T'", "2 dimensions"});
  expect_value_error(
      [&] {
        compute(
            {4}, [&](Var i) { return A(i); }, "U");
      },
      {"tensor 'A'", "2 dimensions"});
}

TEST(TeSchedule, LowerRejectsMissingArgumentsAndReadersOutsideTheAttachLoop) {
  MatmulGraph g;
  Tensor E = compute(
      {8, 8}, [&](Var i, Var j) { return g.D(i, j) + g.C(j, i); }, "E");
  Schedule s = create_schedule({E});
  expect_value_error([&] { lower(s, {g.A, g.B}, "f"); }, {"output 'E'", "not among the arguments"});
  expect_value_error([&] { lower(s, {g.A, E}, "f"); }, {"placeholder 'B'", "not among the arguments"});
  s[g.C].compute_at(s[g.D], g.D.axis(0));
  expect_value_error([&] { lower(s, {g.A, g.B, E}, "f"); }, {"stage 'C'", "stage 'E'", "outside that loop"});
}

}  // namespace
}  // namespace anvil::te
