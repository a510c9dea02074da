#include "anvil/frontend/onnx/external_data.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/tensor_proto.h"
#include "anvil/frontend/onnx/test_models.h"

namespace anvil::frontend::onnx {
namespace {

using testing::error_of;
using testing::random_bytes;
using testing::TempDir;
using testing::write_file;

TensorProto external_tensor(const std::string& name, std::vector<int64_t> dims,
                            std::vector<std::pair<std::string, std::string>> entries) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  t.set_data_location(TensorProto::EXTERNAL);
  for (auto& [k, v] : entries) {
    auto* e = t.add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  return t;
}

std::string bytes_of(const Tensor& t) { return std::string(static_cast<const char*>(t.data()), t.nbytes()); }

TEST(ExternalData, ReadsAtOffsetAndLength) {
  TempDir dir;
  std::string file = random_bytes(100);
  write_file(dir / "weights.bin", file);
  TensorProto t = external_tensor("w", {2, 3}, {{"location", "weights.bin"}, {"offset", "16"}, {"length", "24"}});
  ExternalDataRef ref = resolve_external_data(t, dir.path());
  EXPECT_EQ(ref.path, dir / "weights.bin");
  EXPECT_EQ(ref.offset, 16u);
  EXPECT_EQ(ref.length, 24u);
  Tensor tensor = tensor_from_proto(t, dir.path());
  EXPECT_EQ(tensor.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(bytes_of(tensor), file.substr(16, 24));
}

TEST(ExternalData, WithoutLengthTakesTheRestOfTheFileInASubdirectory) {
  TempDir dir;
  std::string file = random_bytes(4 + 12);
  write_file(dir / "data" / "b.bin", file);
  TensorProto t = external_tensor("b", {3}, {{"location", "data/b.bin"}, {"offset", "4"}, {"checksum", "x"}});
  EXPECT_EQ(bytes_of(tensor_from_proto(t, dir.path())), file.substr(4));
}

TEST(ExternalData, MissingFileIsAnIOErrorNamingTensorAndPath) {
  TempDir dir;
  TensorProto t = external_tensor("fc.weight", {1}, {{"location", "nope.bin"}});
  ErrorKind kind{};
  std::string msg = error_of([&] { tensor_from_proto(t, dir.path()); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kIO);
  EXPECT_NE(msg.find("tensor 'fc.weight'"), std::string::npos) << msg;
  EXPECT_NE(msg.find((dir / "nope.bin").string()), std::string::npos) << msg;
}

TEST(ExternalData, LocationsLeavingTheModelDirectoryAreRefused) {
  TempDir dir;
  write_file(dir / "sub" / "model_dir" / "ok.bin", random_bytes(4));
  write_file(dir / "secret.bin", random_bytes(4));
  std::filesystem::path model_dir = dir / "sub" / "model_dir";
  std::vector<std::string> escaping = {"../../secret.bin", "../model_dir/ok.bin", "a/../../secret.bin",
                                       (dir / "secret.bin").string(), "/etc/passwd"};
  for (const std::string& location : escaping) {
    TensorProto t = external_tensor("w", {1}, {{"location", location}});
    ErrorKind kind{};
    std::string msg = error_of([&] { tensor_from_proto(t, model_dir); }, &kind);
    EXPECT_EQ(kind, ErrorKind::kValue) << location;
    EXPECT_NE(msg.find("tensor 'w'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(location), std::string::npos) << msg;
  }
  // A plain name inside the directory still works.
  TensorProto ok = external_tensor("w", {1}, {{"location", "ok.bin"}});
  EXPECT_EQ(tensor_from_proto(ok, model_dir).numel(), 1);
}

TEST(ExternalData, OffsetsAndLengthsBeyondTheFileAreRefused) {
  TempDir dir;
  write_file(dir / "w.bin", random_bytes(16));
  for (auto entries : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{"location", "w.bin"}, {"offset", "17"}},
           {{"location", "w.bin"}, {"offset", "8"}, {"length", "12"}},
           {{"location", "w.bin"}, {"offset", "18446744073709551615"}, {"length", "2"}},
       }) {
    TensorProto t = external_tensor("w", {1}, entries);
    ErrorKind kind{};
    std::string msg = error_of([&] { tensor_from_proto(t, dir.path()); }, &kind);
    EXPECT_EQ(kind, ErrorKind::kValue);
    EXPECT_NE(msg.find("tensor 'w'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("beyond the end"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(16 bytes)"), std::string::npos) << msg;
  }
}

TEST(ExternalData, LengthMustMatchTheDims) {
  TempDir dir;
  write_file(dir / "w.bin", random_bytes(16));
  TensorProto t = external_tensor("w", {3}, {{"location", "w.bin"}});
  std::string msg = error_of([&] { tensor_from_proto(t, dir.path()); });
  EXPECT_NE(msg.find("external data holds 16 bytes; expected 12"), std::string::npos) << msg;
}

TEST(ExternalData, MalformedEntriesAreValueErrors) {
  TempDir dir;
  write_file(dir / "w.bin", random_bytes(8));
  for (auto entries : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {},
           {{"location", ""}},
           {{"location", "w.bin"}, {"offset", "-4"}},
           {{"location", "w.bin"}, {"offset", "0x10"}},
           {{"location", "w.bin"}, {"length", "4 "}},
           {{"location", "w.bin"}, {"length", "99999999999999999999999"}},
           {{"location", "w.bin"}, {"location", "w.bin"}},
       }) {
    TensorProto t = external_tensor("bad", {1}, entries);
    ErrorKind kind{};
    std::string msg = error_of([&] { resolve_external_data(t, dir.path()); }, &kind);
    EXPECT_EQ(kind, ErrorKind::kValue) << msg;
    EXPECT_NE(msg.find("tensor 'bad'"), std::string::npos) << msg;
  }
}

TEST(ExternalData, NeedsADirectoryToResolveAgainst) {
  TensorProto t = external_tensor("w", {1}, {{"location", "w.bin"}});
  std::string msg = error_of([&] { tensor_from_proto(t); });
  EXPECT_NE(msg.find("not loaded from a file"), std::string::npos) << msg;
}

TEST(ExternalData, ADirectoryIsNotADataFile) {
  TempDir dir;
  std::filesystem::create_directories(dir / "d");
  TensorProto t = external_tensor("w", {1}, {{"location", "d"}});
  ErrorKind kind{};
  std::string msg = error_of([&] { tensor_from_proto(t, dir.path()); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kIO);
  EXPECT_NE(msg.find("not a regular file"), std::string::npos) << msg;
}

}  // namespace
}  // namespace anvil::frontend::onnx
