// The VM profiler: rows per call site with a sleeping kernel's known time, argument shapes and
// devices, totals that equal the sum of the rows with nested VM calls, closures and recursion,
// and the four output formats (table, CSV, Chrome trace, JSON) checked by inspection.
#include "anvil/runtime/vm/profiler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <thread>

#include "anvil/runtime/register.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/vm/exec_builder.h"

namespace anvil::vm {
namespace {

class ProfilerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    register_runtime_functions();
    // sleep_us(x, y, us): a "kernel" of known duration over two tensors.
    register_function("test.profiler.sleep_us", [](Tensor, Tensor, int64_t us) {
      std::this_thread::sleep_for(std::chrono::microseconds(us));
    }, true);
    register_function("test.profiler.nap_us", [](int64_t us) {
      std::this_thread::sleep_for(std::chrono::microseconds(us));
      return us;
    }, true);
  }

  // main(x, y): sleep_us(x, y, 2000) twice at two sites, then a cheap builtin.
  static VirtualMachine kernel_vm() {
    ExecBuilder b;
    b.begin_function("main", {"x", "y"});
    b.emit_call("test.profiler.sleep_us", {Arg::reg(0), Arg::reg(1), Arg::imm(2000)});
    b.emit_call("test.profiler.sleep_us", {Arg::reg(0), Arg::reg(1), Arg::imm(1000)});
    b.emit_call("vm.builtin.add", {Arg::imm(1), Arg::imm(2)}, 2);
    b.emit_ret(2);
    b.end_function();
    return VirtualMachine::create(b.get().as_module());
  }
  static Tensor x() { return Tensor::empty({4, 16}, DataType::float32()); }
  static Tensor y() { return Tensor::empty({2}, DataType::int64()); }

  // Keeps the report alive past the temporary Value it came in.
  static Ref<ProfileReportNode> report(const Value& v) { return Ref<ProfileReportNode>(report_from_value(v)); }
};

// Structure check for JSON without a JSON library: brackets balance outside strings.
bool balanced_json(const std::string& text) {
  std::vector<char> stack;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') stack.push_back(c);
    else if (c == '}' || c == ']') {
      if (stack.empty() || stack.back() != (c == '}' ? '{' : '[')) return false;
      stack.pop_back();
    }
  }
  return stack.empty() && !in_string;
}

// RFC 4180 line splitting (quoted fields may hold commas and doubled quotes).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') fields.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) fields.emplace_back();
    else fields.back() += c;
  }
  return fields;
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST_F(ProfilerTest, SleepingKernelShowsUpWithItsTime) {
  VirtualMachine vm = kernel_vm();
  Ref<ProfileReportNode> r = report(vm["profile"]("main", x(), y()));
  ASSERT_EQ(r->rows.size(), 3u);
  auto site = [&](const std::string& name) -> const ProfileRow& {
    for (const ProfileRow& row : r->rows)
      if (row.call_site == name) return row;
    ADD_FAILURE() << "no row for call site " << name;
    return r->rows[0];
  };
  const ProfileRow& first = site("main:0");
  EXPECT_EQ(first.name, "test.profiler.sleep_us");
  EXPECT_EQ(first.calls, 1);
  EXPECT_GE(first.mean_us, 2000.0);
  EXPECT_LT(first.mean_us, 50000.0);  // loose: a loaded machine oversleeps
  EXPECT_EQ(first.arg_shapes, "float32[4, 16], int64[2]");
  EXPECT_EQ(first.devices, "cpu:0");
  EXPECT_GE(site("main:1").mean_us, 1000.0);
  const ProfileRow& add = site("main:2");
  EXPECT_EQ(add.name, "vm.builtin.add");
  EXPECT_EQ(add.devices, "-");
  EXPECT_EQ(add.arg_shapes, "");
  EXPECT_EQ(r->rows.back().name, "vm.builtin.add");  // rows come by total time, descending
  EXPECT_GE(r->rows[0].total_us, r->rows[1].total_us);
  EXPECT_GT(first.percent + site("main:1").percent, 90.0);
}

TEST_F(ProfilerTest, TableHasEveryColumnAndATotalRow) {
  VirtualMachine vm = kernel_vm();
  std::string table = Registry::get("vm.profile_report.table")(vm["profile"]("main", x(), y())).as_string();
  for (const char* column : {"Name", "Call Site", "Calls", "Total (us)", "Mean (us)", "Percent", "Device",
                             "Argument Shapes"})
    EXPECT_NE(table.find(column), std::string::npos) << column << "\n" << table;
  EXPECT_TRUE(std::regex_search(table, std::regex("\nTotal +3 +[0-9.]+ +100.00%"))) << table;
  EXPECT_NE(table.find("wall time"), std::string::npos);
  // Aligned: the Calls column ends at the same offset on every row.
  std::vector<std::string> lines;
  for (size_t at = 0, nl; (nl = table.find('\n', at)) != std::string::npos; at = nl + 1) lines.push_back(table.substr(at, nl - at));
  ASSERT_GE(lines.size(), 6u);
  size_t end_of_calls = lines[0].find("Calls") + 5;
  for (size_t i : {2, 3, 4}) EXPECT_EQ(lines[i][end_of_calls - 1], '1') << lines[i];
}

TEST_F(ProfilerTest, NestedCallsAreCountedOnce) {
  // inner(n) naps n µs; main calls it directly, through a closure and recursively via twice().
  ExecBuilder b;
  int64_t inner = b.declare_function("inner", {"us"});
  b.begin_function("inner", {"us"});
  b.emit_call("test.profiler.nap_us", {Arg::reg(0)}, 1);
  b.emit_ret(1);
  b.end_function();
  b.begin_function("twice", {"us"});
  b.emit_call("inner", {Arg::reg(0)}, 1);
  b.emit_call("inner", {Arg::reg(0)}, 2);
  b.emit_ret(2);
  b.end_function();
  b.begin_function("main", {"us"});
  b.emit_call("twice", {Arg::reg(0)}, 1);
  b.emit_call("vm.builtin.invoke_closure", {Arg::vm(), Arg::func(inner), Arg::reg(0)}, 2);
  b.emit_call("test.profiler.nap_us", {Arg::reg(0)}, 3);
  b.emit_ret(3);
  b.end_function();
  VirtualMachine vm = VirtualMachine::create(b.get().as_module());
  Ref<ProfileReportNode> r = report(vm["profile"]("main", 1500));
  double sum = 0;
  int64_t naps = 0;
  for (const ProfileRow& row : r->rows) {
    sum += row.total_us;
    EXPECT_NE(row.name, "inner");  // VM functions are frames, not rows
    EXPECT_NE(row.name, "twice");
    if (row.name == "test.profiler.nap_us") naps += row.calls;
  }
  EXPECT_EQ(naps, 4);
  EXPECT_NEAR(r->total_us(), sum, 0.05 * sum);
  // Counting the closure's nap twice (inside invoke_closure and on its own) would put the rows
  // one nap (1.5 ms) above the wall time of the run; counted once they fit inside it.
  EXPECT_LE(r->total_us(), r->wall_us);
  EXPECT_GE(r->total_us(), 4 * 1500.0);
  // The closure builtin is a row of its own, charged only its exclusive time.
  for (const ProfileRow& row : r->rows) {
    if (row.name == "vm.builtin.invoke_closure") {
      EXPECT_LT(row.total_us, 1000.0);
    }
  }
  // inner:0 collects the naps of all three paths into one call site.
  auto site = std::find_if(r->rows.begin(), r->rows.end(), [](const ProfileRow& row) { return row.call_site == "inner:0"; });
  ASSERT_NE(site, r->rows.end());
  EXPECT_EQ(site->calls, 3);
  // The trace keeps the VM frames entered by Call instructions: main itself, twice, and inner
  // twice (the closure's inner runs inside the invoke_closure slice, with no call of its own).
  EXPECT_EQ(count(r->chrome_trace(), "\"cat\": \"vm_function\""), 1u + 1 + 2);
}

TEST_F(ProfilerTest, CsvHasOneLinePerRowAndEightFields) {
  VirtualMachine vm = kernel_vm();
  std::string csv = Registry::get("vm.profile_report.csv")(vm["profile"]("main", x(), y())).as_string();
  std::vector<std::string> lines;
  for (size_t at = 0, nl; (nl = csv.find('\n', at)) != std::string::npos; at = nl + 1) lines.push_back(csv.substr(at, nl - at));
  ASSERT_EQ(lines.size(), 1u + 3);
  for (const std::string& line : lines) EXPECT_EQ(csv_fields(line).size(), 8u) << line;
  EXPECT_EQ(csv_fields(lines[0])[3], "Total (us)");
  EXPECT_EQ(csv_fields(lines[1])[7], "float32[4, 16], int64[2]");  // quoted: it holds commas
  EXPECT_GE(std::stod(csv_fields(lines[1])[3]), 2000.0);
}

TEST_F(ProfilerTest, ChromeTraceHasCompleteEvents) {
  VirtualMachine vm = kernel_vm();
  Ref<ProfileReportNode> r = report(vm["profile"]("main", x(), y()));
  std::string trace = Registry::get("vm.profile_report.chrome_trace")(Value::object(Ref<Object>(r))).as_string();
  EXPECT_EQ(trace.rfind("{\"traceEvents\": [", 0), 0u) << trace;
  EXPECT_TRUE(balanced_json(trace)) << trace;
  EXPECT_EQ(count(trace, "\"ph\": \"X\""), r->records.size() + 1);  // + the profiled call itself
  EXPECT_EQ(count(trace, "\"ts\": "), r->records.size() + 1);
  EXPECT_EQ(count(trace, "\"dur\": "), r->records.size() + 1);
  EXPECT_NE(trace.find("\"name\": \"test.profiler.sleep_us\""), std::string::npos);
  EXPECT_NE(trace.find("\"argument_shapes\": \"float32[4, 16], int64[2]\""), std::string::npos);
}

TEST_F(ProfilerTest, JsonListsTheRows) {
  VirtualMachine vm = kernel_vm();
  std::string json = Registry::get("vm.profile_report.json")(vm["profile"]("main", x(), y())).as_string();
  EXPECT_TRUE(balanced_json(json)) << json;
  EXPECT_EQ(count(json, "\"call_site\": "), 3u);
  for (const char* key : {"\"function\": \"main\"", "\"wall_us\": ", "\"total_us\": ", "\"rows\": [", "\"percent\": "})
    EXPECT_NE(json.find(key), std::string::npos) << key;
}

TEST_F(ProfilerTest, UsesSetInputWhenNoArgumentsAreGiven) {
  VirtualMachine vm = kernel_vm();
  EXPECT_THROW(vm["profile"]("main"), Error);  // nothing set yet
  vm["set_input"]("main", x(), y());
  Ref<ProfileReportNode> r = report(vm["profile"]("main"));
  EXPECT_EQ(r->rows.size(), 3u);
  EXPECT_EQ(vm["get_output"]("main").as_int(), 3);
}

TEST_F(ProfilerTest, ErrorsAreReportedAndTheVMKeepsWorking) {
  VirtualMachine vm = kernel_vm();
  auto kind_of = [](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::kInternal;  // "no error" marker
  };
  EXPECT_EQ(kind_of([&] { vm["profile"]("nope"); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([&] { vm["profile"](42); }), ErrorKind::kType);
  EXPECT_EQ(kind_of([&] { vm["profile"](); }), ErrorKind::kType);
  EXPECT_EQ(kind_of([&] { vm["profile"]("main", 1, 2); }), ErrorKind::kType);  // kernel rejects ints
  EXPECT_EQ(kind_of([&] { Registry::get("vm.profile_report.table")(1); }), ErrorKind::kType);
  EXPECT_EQ(kind_of([&] { Registry::get("vm.profile_report.csv")(); }), ErrorKind::kType);
  // After a failed profile the instrument is gone and profiling works again.
  EXPECT_EQ(vm["main"](x(), y()).as_int(), 3);
  EXPECT_EQ(report(vm["profile"]("main", x(), y()))->rows.size(), 3u);
}

}  // namespace
}  // namespace anvil::vm
