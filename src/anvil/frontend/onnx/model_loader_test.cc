#include "anvil/frontend/onnx/model_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/tensor_proto.h"
#include "anvil/frontend/onnx/test_models.h"

namespace anvil::frontend::onnx {
namespace {

using testing::error_of;
using testing::random_bytes;
using testing::serialize;
using testing::small_model;
using testing::TempDir;
using testing::write_file;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ModelLoader, LoadsAFileAndItsOpsets) {
  TempDir dir;
  ModelProto model = small_model();
  auto* ms = model.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  write_file(dir / "m.onnx", serialize(model));
  LoadedModel loaded = load_model(dir / "m.onnx");
  EXPECT_EQ(loaded.source, (dir / "m.onnx").string());
  EXPECT_EQ(loaded.base_dir, dir.path());
  EXPECT_EQ(loaded.proto.graph().node_size(), 2);
  EXPECT_EQ(default_opset(loaded.proto), 17);
  EXPECT_EQ(opset_version(loaded.proto, "ai.onnx"), 17);
  EXPECT_EQ(opset_version(loaded.proto, "com.microsoft"), 1);
  EXPECT_EQ(opset_version(loaded.proto, "ai.onnx.ml"), std::nullopt);
  Tensor w = tensor_from_proto(loaded.proto.graph().initializer(0), loaded.base_dir);
  EXPECT_EQ(static_cast<float*>(w.data())[1], -1.25f);
}

TEST(ModelLoader, LoadsFromBytes) {
  LoadedModel loaded = load_model_from_bytes(serialize(small_model()));
  EXPECT_EQ(loaded.source, "<bytes>");
  EXPECT_TRUE(loaded.base_dir.empty());
  EXPECT_EQ(loaded.proto.graph().name(), "small");
}

TEST(ModelLoader, UnreadableFilesAreIOErrorsNamingThePath) {
  TempDir dir;
  ErrorKind kind{};
  std::string msg = error_of([&] { load_model(dir / "missing.onnx"); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kIO);
  EXPECT_TRUE(contains(msg, (dir / "missing.onnx").string())) << msg;
  EXPECT_TRUE(contains(msg, "No such file")) << msg;

  msg = error_of([&] { load_model(dir.path()); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kIO);
  EXPECT_TRUE(contains(msg, "is a directory")) << msg;
}

TEST(ModelLoader, EmptyAndGarbageFilesAreNotModels) {
  TempDir dir;
  write_file(dir / "empty.onnx", "");
  ErrorKind kind{};
  std::string msg = error_of([&] { load_model(dir / "empty.onnx"); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_TRUE(contains(msg, "empty.onnx' is empty")) << msg;

  // 0xff... is an invalid field tag: protobuf refuses it outright.
  write_file(dir / "garbage.onnx", std::string(16, '\xff') + random_bytes(64));
  msg = error_of([&] { load_model(dir / "garbage.onnx"); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_TRUE(contains(msg, "garbage.onnx' is not an ONNX model")) << msg;

  // Random bytes may happen to parse (as unknown fields); they still never make a model.
  for (int i = 0; i < 200; ++i) {
    std::string bytes = random_bytes(1 + i % 50);
    msg = error_of([&] { load_model_from_bytes(bytes, "random"); }, &kind);
    EXPECT_EQ(kind, ErrorKind::kValue) << msg;
    EXPECT_TRUE(contains(msg, "'random'")) << msg;
  }
}

TEST(ModelLoader, EveryTruncationOfAModelFails) {
  TempDir dir;
  // opset_import (field 8) is the last field written: no strict prefix is a complete model.
  std::string bytes = serialize(small_model());
  for (size_t n = 1; n < bytes.size(); ++n) {
    write_file(dir / "t.onnx", bytes.substr(0, n));
    ErrorKind kind{};
    std::string msg = error_of([&] { load_model(dir / "t.onnx"); }, &kind);
    EXPECT_EQ(kind, ErrorKind::kValue) << n << ": " << msg;
    EXPECT_TRUE(contains(msg, "t.onnx")) << msg;
  }
  write_file(dir / "t.onnx", bytes);
  EXPECT_NO_THROW(load_model(dir / "t.onnx"));
}

TEST(ModelLoader, AModelWithoutAGraphIsRefused) {
  ModelProto model = small_model();
  model.clear_graph();
  std::string msg = error_of([&] { load_model_from_bytes(serialize(model), "nograph.onnx"); });
  EXPECT_TRUE(contains(msg, "'nograph.onnx' has no graph")) << msg;
}

TEST(ModelLoader, OpsetImportsAreChecked) {
  ModelProto none = small_model();
  none.clear_opset_import();
  EXPECT_TRUE(contains(error_of([&] { load_model_from_bytes(serialize(none)); }), "declares no opset_import"));

  ModelProto zero = small_model();
  zero.mutable_opset_import(0)->set_version(0);
  EXPECT_TRUE(contains(error_of([&] { load_model_from_bytes(serialize(zero)); }),
                       "opset_import[0] (domain 'ai.onnx') has version 0"));

  ModelProto twice = small_model();
  auto* again = twice.add_opset_import();
  again->set_domain("ai.onnx");
  again->set_version(13);
  EXPECT_TRUE(contains(error_of([&] { load_model_from_bytes(serialize(twice)); }), "names domain 'ai.onnx' twice"));

  ModelProto only_ms = small_model();
  only_ms.mutable_opset_import(0)->set_domain("com.microsoft");
  std::string msg = error_of([&] { load_model_from_bytes(serialize(only_ms)); });
  EXPECT_TRUE(contains(msg, "node 'add' (Add) uses domain ''")) << msg;
  EXPECT_TRUE(contains(error_of([&] { default_opset(only_ms, "x.onnx"); }),
                       "'x.onnx': the model does not import the ai.onnx opset"));
}

TEST(ModelLoader, NodesNeedAnOpType) {
  ModelProto model = small_model();
  model.mutable_graph()->mutable_node(1)->clear_op_type();
  std::string msg = error_of([&] { load_model_from_bytes(serialize(model), "m.onnx"); });
  EXPECT_TRUE(contains(msg, "'m.onnx': graph 'small' node 1 () has an empty op_type")) << msg;
}

TEST(ModelLoader, SubgraphNodesAreCheckedToo) {
  ModelProto model = small_model();
  NodeProto* cond = model.mutable_graph()->add_node();
  cond->set_op_type("If");
  cond->set_name("branch");
  AttributeProto* then_branch = cond->add_attribute();
  then_branch->set_name("then_branch");
  then_branch->set_type(AttributeProto::GRAPH);
  GraphProto* sub = then_branch->mutable_g();
  sub->set_name("then");
  sub->add_node()->set_name("inner");  // no op_type
  std::string msg = error_of([&] { load_model_from_bytes(serialize(model)); });
  EXPECT_TRUE(contains(msg, "node 'branch' (If) attribute 'then_branch' node 'inner' () has an empty op_type")) << msg;
}

TEST(ModelLoader, LocalFunctionDomainsNeedNoOpsetImport) {
  ModelProto model = small_model();
  model.mutable_graph()->mutable_node(1)->set_domain("my.funcs");
  EXPECT_TRUE(contains(error_of([&] { load_model_from_bytes(serialize(model)); }), "uses domain 'my.funcs'"));
  FunctionProto* fn = model.add_functions();
  fn->set_domain("my.funcs");
  fn->set_name("Relu");
  EXPECT_NO_THROW(load_model_from_bytes(serialize(model)));
}

TEST(ModelLoader, ExternalDataIsCheckedAtLoad) {
  TempDir dir;
  ModelProto model = small_model();
  TensorProto* w = model.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("m.data");
  write_file(dir / "m.onnx", serialize(model));
  ErrorKind kind{};
  std::string msg = error_of([&] { load_model(dir / "m.onnx"); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kIO);
  EXPECT_TRUE(contains(msg, "graph 'small' initializer 'w'")) << msg;
  EXPECT_TRUE(contains(msg, "m.data")) << msg;

  std::string data = random_bytes(12);
  write_file(dir / "m.data", data);
  LoadedModel loaded = load_model(dir / "m.onnx");
  Tensor t = tensor_from_proto(loaded.proto.graph().initializer(0), loaded.base_dir);
  EXPECT_EQ(std::string(static_cast<char*>(t.data()), 12), data);

  // From bytes there is no directory unless one is given.
  msg = error_of([&] { load_model_from_bytes(serialize(model)); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_TRUE(contains(msg, "not loaded from a file")) << msg;
  EXPECT_NO_THROW(load_model_from_bytes(serialize(model), "m", dir.path()));
}

TEST(ModelLoader, ModelsAbove64MiBParse) {
  // protobuf's old default total-bytes limit was 64 MiB; the loader raises it to 2 GiB - 1.
  TempDir dir;
  ModelProto model = small_model();
  TensorProto* big = model.mutable_graph()->add_initializer();
  big->set_name("big");
  big->set_data_type(TensorProto::UINT8);
  big->add_dims(70 << 20);
  big->set_raw_data(std::string(70 << 20, '\x5a'));
  write_file(dir / "big.onnx", serialize(model));
  LoadedModel loaded = load_model(dir / "big.onnx");
  EXPECT_EQ(loaded.proto.graph().initializer(1).raw_data().size(), size_t{70} << 20);
}

TEST(ModelLoader, FilesOf2GiBOrMoreAskForExternalData) {
  TempDir dir;
  std::filesystem::path path = dir / "huge.onnx";
  write_file(path, "");
  // A sparse file: no disk space, only the size matters.
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(kMaxModelBytes) + 1), 0);
  ErrorKind kind{};
  std::string msg = error_of([&] { load_model(path); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_TRUE(contains(msg, "huge.onnx' is 2147483648 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "external data")) << msg;
}

}  // namespace
}  // namespace anvil::frontend::onnx
