// The operator families of the graph IR. Each family file defines its operators' type
// inference and registers them (graph/op_registry.h) from its register_<family>_ops();
// register_all_ops calls them all, once, when the table is first read.
//
// Operator names, arguments and attributes are documented in each family file's header
// comment; docs/operators.md lists them all (generated from list_ops()).
#pragma once

#include <string>

#include "anvil/graph/expr.h"

namespace anvil::graph::ops {

void register_elementwise_ops();  // unary/binary/compare/where/cast/activations (elementwise.cc)
void register_reduce_ops();       // sum/mean/max/min/prod/argmax/argmin/cumsum/topk (reduce.cc)
void register_nn_ops();           // nn.*: conv2d, conv2d_transpose, dense, matmul, pools, norms, softmax (nn.cc)
void register_transform_ops();    // reshape/transpose/concat/split/slice/gather/pad/resize/... (transform.cc)
void register_shape_ops();        // shape_of, shape_to_tensor and other VM-evaluated ops (shape.cc)
void register_fused_ops();        // call_fused, a fused group's call (fused.cc)
void register_control_flow_ops(); // if, loop: calls of branch/body functions (control_flow.cc)
void register_data_dependent_ops(); // nonzero, dynamic_slice, unique: shapes from values (data_dependent.cc)

// What is wrong with a nonzero/dynamic_slice/unique call's given type ("" when it fits; the verifier's check).
std::string check_data_dependent_type(const CallNode& c);

void register_all_ops();

}  // namespace anvil::graph::ops
