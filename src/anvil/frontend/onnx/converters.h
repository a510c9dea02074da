// The ONNX converter table: op_type -> converter, filled by the family files
// (convert_<family>.cc, each a register_<family>_converters()), read by the importer only.
// A converter returns one expression per node output (fewer when trailing optional outputs
// are not produced) and handles every form the op takes across opsets (ctx.opset()).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "anvil/frontend/onnx/import_context.h"

namespace anvil::frontend::onnx {

using Converter = std::function<std::vector<graph::Expr>(ImportContext& ctx)>;

// nullptr when op_type has no converter (the importer reports it with the node's name).
const Converter* find_converter(const std::string& op_type);
std::vector<std::string> list_converters();  // sorted op_types
// From a register_*_converters function only; InternalError on a duplicate.
void register_converter(const std::string& op_type, Converter converter);

void register_elementwise_converters();  // convert_elementwise.cc
void register_reduce_converters();       // convert_reduce.cc
void register_nn_converters();           // convert_nn.cc
void register_attention_converter();     // convert_attention.cc
void register_linear_attention_converter();  // convert_linear_attention.cc
void register_transform_converters();    // convert_transform.cc (also Shape, Constant, Identity, ...)
void register_quantize_converters();     // convert_quantize.cc (QuantizeLinear, DequantizeLinear)
void register_recurrent_converters();    // convert_recurrent.cc (RNN, GRU, LSTM)
void register_dropout_converter();       // convert_dropout.cc
void register_rotary_converter();        // convert_rotary.cc (RotaryEmbedding)

}  // namespace anvil::frontend::onnx
