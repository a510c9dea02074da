// Tests of Python-compatible JSON text: spacing, escapes, float repr, depth scan.
#include "anvil/rpc/tracker/py_json.h"

#include <gtest/gtest.h>

namespace anvil::rpc::tracker {
namespace {

TEST(PyJson, UsesPythonSeparatorsAndKeepsKeyOrder) {
  Json value = Json::array({0, Json::array({"127.0.0.1", 9090, "rasp:0.5"})});
  EXPECT_EQ(py_dumps(value), R"([0, ["127.0.0.1", 9090, "rasp:0.5"]])");
  Json object = Json::object();
  object["zeta"] = 1;
  object["alpha"] = nullptr;
  object["mid"] = Json::array();
  EXPECT_EQ(py_dumps(object), R"({"zeta": 1, "alpha": null, "mid": []})");
  EXPECT_EQ(py_dumps(Json::object()), "{}");
  EXPECT_EQ(py_dumps(true), "true");
}

TEST(PyJson, EscapesLikeEnsureAscii) {
  EXPECT_EQ(py_dumps("a\"b\\c\n\t\r\b\f/"), R"("a\"b\\c\n\t\r\b\f/")");
  EXPECT_EQ(py_dumps(std::string("\x01\x7f", 2)), R"("\u0001\u007f")");
  EXPECT_EQ(py_dumps("\xc3\xa9"), R"("\u00e9")");                // é
  EXPECT_EQ(py_dumps("\xf0\x9f\x98\x80"), R"("\ud83d\ude00")");  // U+1F600 as a surrogate pair
}

TEST(PyJson, FloatsPrintAsPythonRepr) {
  EXPECT_EQ(py_float_repr(1.0, true), "1.0");
  EXPECT_EQ(py_float_repr(0.1, true), "0.1");
  EXPECT_EQ(py_float_repr(-2.5, true), "-2.5");
  EXPECT_EQ(py_float_repr(1e15, true), "1000000000000000.0");
  EXPECT_EQ(py_float_repr(1e16, true), "1e+16");
  EXPECT_EQ(py_float_repr(1.5e-5, true), "1.5e-05");
  EXPECT_EQ(py_float_repr(0.0001, true), "0.0001");
  EXPECT_EQ(py_float_repr(123.456, true), "123.456");
  EXPECT_EQ(py_float_repr(1e100, true), "1e+100");
  EXPECT_EQ(py_float_repr(0.0, true), "0.0");
}

TEST(PyJson, StrOfScalarsMatchesPython) {
  EXPECT_EQ(py_str(Json()), "None");
  EXPECT_EQ(py_str(true), "True");
  EXPECT_EQ(py_str(9090), "9090");
  EXPECT_EQ(py_str("10.0.0.5"), "10.0.0.5");
  EXPECT_EQ(py_str(2.0), "2.0");
}

TEST(PyJson, MeasuresLengthAndDepth) {
  EXPECT_EQ(utf8_length("abc"), 3u);
  EXPECT_EQ(utf8_length("\xc3\xa9x"), 2u);
  EXPECT_EQ(json_nesting_depth("[1, [2, {\"a\": [3]}]]"), 4);
  EXPECT_EQ(json_nesting_depth("[\"[[[[\", \"\\\"[[\"]"), 1);  // brackets inside strings do not count
  EXPECT_EQ(json_nesting_depth("7"), 0);
}

}  // namespace
}  // namespace anvil::rpc::tracker
