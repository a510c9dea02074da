// The VM profiler: an instrument that records every Call of one run (with exclusive times for
// packed calls, see profiler.h), the per-call-site aggregation, the report's four output formats
// and the registration of vm["profile"] and vm.profile_report.*.
#include "anvil/runtime/vm/profiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <utility>

#include "anvil/base/error.h"
#include "anvil/runtime/device_api.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/tensor.h"

namespace anvil::vm {
namespace {

using Clock = std::chrono::steady_clock;

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void add_device(std::vector<Device>& devices, Device d) {
  if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
}

void sync_all(const std::vector<Device>& devices) {
  for (const Device& d : devices) DeviceAPI::get(d)->sync(d, nullptr);
}

// Records the calls of one run through the VM's instrument hook.
class Collector {
 public:
  explicit Collector(Clock::time_point origin) : origin_(origin) {}

  void on_event(const CallEvent& e) {
    if (e.before) begin(e);
    else end(e);
  }
  std::vector<CallRecord> take() { return std::move(records_); }

 private:
  struct Open {
    size_t record;
    Clock::time_point start;
    std::vector<Device> devices;
    double nested_packed_us = 0;  // inclusive time of the packed calls nested in this one
  };

  void begin(const CallEvent& e) {
    CallRecord r;
    r.callee = e.callee->name;
    // A kernel called through call_tir_dyn (it takes shape values) is charged to the kernel.
    if (r.callee == "vm.builtin.call_tir_dyn" && !e.args.empty() && e.args[0].kind() == ValueKind::kFunction &&
        !e.args[0].as_function().name().empty())
      r.callee = e.args[0].as_function().name();
    r.caller = e.caller->name;
    r.instr = e.pc - e.caller->start_instr;
    r.is_vm_function = e.callee->kind == FuncKind::kVMFunc;
    r.depth = static_cast<int>(open_.size());
    Open open{records_.size(), {}, {}};
    for (const Value& a : e.args) {
      if (a.kind() != ValueKind::kTensor) continue;
      Tensor t = a.as_tensor();
      r.arg_shapes += (r.arg_shapes.empty() ? "" : ", ") + t.dtype().to_string() + shape_to_string(t.shape());
      add_device(open.devices, t.device());
    }
    records_.push_back(std::move(r));
    // Work queued before this call is not charged to it.
    sync_all(open.devices);
    open.start = Clock::now();
    records_.back().start_us = micros(open.start - origin_);
    open_.push_back(std::move(open));
  }

  void end(const CallEvent& e) {
    if (open_.empty()) return;
    // Normally the innermost open call; a call whose error a builtin swallowed never ended.
    size_t at = open_.size() - 1;
    while (at > 0 && !matches(records_[open_[at].record], e)) --at;
    Open open = std::move(open_[at]);
    open_.resize(at);
    if (e.result != nullptr && e.result->kind() == ValueKind::kTensor) add_device(open.devices, e.result->as_tensor().device());
    sync_all(open.devices);
    double duration = micros(Clock::now() - open.start);
    CallRecord& r = records_[open.record];
    r.duration_us = duration;
    r.devices.clear();
    for (const Device& d : open.devices) r.devices += (r.devices.empty() ? "" : ", ") + d.to_string();
    if (r.devices.empty()) r.devices = "-";
    if (r.is_vm_function) return;
    r.exclusive_us = std::max(0.0, duration - open.nested_packed_us);
    // Charge this call to the nearest enclosing packed call, through any VM-function frames.
    for (size_t i = open_.size(); i-- > 0;) {
      if (!records_[open_[i].record].is_vm_function) {
        open_[i].nested_packed_us += duration;
        break;
      }
    }
  }

  static bool matches(const CallRecord& r, const CallEvent& e) {
    return r.callee == e.callee->name && r.caller == e.caller->name && r.instr == e.pc - e.caller->start_instr;
  }

  Clock::time_point origin_;
  std::vector<CallRecord> records_;
  std::vector<Open> open_;
};

std::vector<ProfileRow> aggregate(const std::vector<CallRecord>& records) {
  std::vector<ProfileRow> rows;
  std::map<std::pair<std::string, int64_t>, size_t> site_index;
  for (const CallRecord& r : records) {
    if (r.is_vm_function) continue;
    auto [it, inserted] = site_index.emplace(std::make_pair(r.caller, r.instr), rows.size());
    if (inserted) {
      ProfileRow row;
      row.name = r.callee;
      row.call_site = r.caller + ":" + std::to_string(r.instr);
      row.devices = r.devices;
      row.arg_shapes = r.arg_shapes;
      rows.push_back(std::move(row));
    }
    ProfileRow& row = rows[it->second];
    row.calls += 1;
    row.total_us += r.exclusive_us;
    if (row.arg_shapes != r.arg_shapes) row.arg_shapes = "(varies)";
    if (row.devices != r.devices) row.devices = "(varies)";
  }
  double total = 0;
  for (const ProfileRow& row : rows) total += row.total_us;
  for (ProfileRow& row : rows) {
    row.mean_us = row.total_us / static_cast<double>(row.calls);
    row.percent = total > 0 ? 100.0 * row.total_us / total : 0.0;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ProfileRow& a, const ProfileRow& b) { return a.total_us > b.total_us; });
  return rows;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

const std::vector<std::string> kColumns = {"Name",      "Call Site", "Calls",  "Total (us)",
                                           "Mean (us)", "Percent",   "Device", "Argument Shapes"};

std::vector<std::string> row_cells(const ProfileRow& r, int digits) {
  return {r.name, r.call_site, std::to_string(r.calls), fixed(r.total_us, digits), fixed(r.mean_us, digits),
          fixed(r.percent, 2), r.devices, r.arg_shapes};
}

}  // namespace

double ProfileReportNode::total_us() const {
  double total = 0;
  for (const ProfileRow& r : rows) total += r.total_us;
  return total;
}

std::string ProfileReportNode::table() const {
  std::vector<std::vector<std::string>> lines{kColumns};
  int64_t calls = 0;
  for (const ProfileRow& r : rows) {
    lines.push_back(row_cells(r, 2));
    lines.back()[5] += "%";
    calls += r.calls;
  }
  lines.push_back({"Total", "", std::to_string(calls), fixed(total_us(), 2), "", rows.empty() ? "" : "100.00%", "", ""});
  std::vector<size_t> width(kColumns.size(), 0);
  for (const auto& line : lines)
    for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string text;
    for (size_t c = 0; c < lines[i].size(); ++c) {
      const std::string& cell = lines[i][c];
      bool numeric = c >= 2 && c <= 5;  // numbers align right, text left
      std::string pad(width[c] - cell.size(), ' ');
      text += (c ? "  " : "") + (numeric ? pad + cell : c + 1 < lines[i].size() ? cell + pad : cell);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
    if (i == 0 || i + 2 == lines.size()) {  // rule under the header and above the Total row
      size_t len = 0;
      for (size_t w : width) len += w + 2;
      out += std::string(len - 2, '-') + "\n";
    }
  }
  double covered = wall_us > 0 ? 100.0 * total_us() / wall_us : 0.0;
  out += "Profiled @" + function + ": " + std::to_string(records.size()) + " calls, wall time " + fixed(wall_us, 2) +
         " us; the rows cover " + fixed(covered, 1) + "% (the rest is interpreter and profiler overhead)\n";
  return out;
}

std::string ProfileReportNode::csv() const {
  std::string out;
  for (size_t c = 0; c < kColumns.size(); ++c) out += (c ? "," : "") + csv_field(kColumns[c]);
  out += "\n";
  for (const ProfileRow& r : rows) {
    std::vector<std::string> cells = row_cells(r, 3);
    for (size_t c = 0; c < cells.size(); ++c) out += (c ? "," : "") + csv_field(cells[c]);
    out += "\n";
  }
  return out;
}

std::string ProfileReportNode::chrome_trace() const {
  auto event = [](const std::string& name, const char* cat, double ts, double dur, const std::string& args) {
    return "{\"name\": " + json_string(name) + ", \"cat\": \"" + cat + "\", \"ph\": \"X\", \"ts\": " + fixed(ts, 3) +
           ", \"dur\": " + fixed(dur, 3) + ", \"pid\": 1, \"tid\": 1, \"args\": {" + args + "}}";
  };
  std::string out = "{\"traceEvents\": [\n";
  out += "  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"anvil vm\"}},\n";
  out += "  " + event(function, "vm_function", 0.0, wall_us, "\"call_site\": \"(profiled call)\"");
  for (const CallRecord& r : records) {
    std::string args = "\"call_site\": " + json_string(r.caller + ":" + std::to_string(r.instr)) +
                       ", \"device\": " + json_string(r.devices) + ", \"argument_shapes\": " + json_string(r.arg_shapes);
    if (!r.is_vm_function) args += ", \"exclusive_us\": " + fixed(r.exclusive_us, 3);
    out += ",\n  " + event(r.callee, r.is_vm_function ? "vm_function" : "packed", r.start_us, r.duration_us, args);
  }
  out += "\n], \"displayTimeUnit\": \"ms\", \"otherData\": {\"profiled_function\": " + json_string(function) + "}}\n";
  return out;
}

std::string ProfileReportNode::json() const {
  std::string out = "{\"function\": " + json_string(function) + ", \"wall_us\": " + fixed(wall_us, 3) +
                    ", \"total_us\": " + fixed(total_us(), 3) + ", \"num_calls\": " + std::to_string(records.size()) +
                    ", \"rows\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const ProfileRow& r = rows[i];
    out += std::string(i ? ", " : "") + "{\"name\": " + json_string(r.name) + ", \"call_site\": " +
           json_string(r.call_site) + ", \"calls\": " + std::to_string(r.calls) + ", \"total_us\": " +
           fixed(r.total_us, 3) + ", \"mean_us\": " + fixed(r.mean_us, 3) + ", \"percent\": " + fixed(r.percent, 3) +
           ", \"device\": " + json_string(r.devices) + ", \"argument_shapes\": " + json_string(r.arg_shapes) + "}";
  }
  return out + "]}";
}

Ref<ProfileReportNode> profile(VirtualMachineNode* vm, const std::string& func_name, Args args) {
  const ExecutableNode& exec = *vm->executable().get();
  int64_t index = exec.find_function(func_name);
  if (index < 0) {
    std::vector<std::string> names = vm->list_functions();  // VM functions and saved functions
    if (std::find(names.begin(), names.end(), func_name) == names.end())
      value_error("profile: the VM has no function named '", func_name, "'");
  }
  // As in TVM: no arguments for a function that takes some means "the inputs from set_input".
  bool stateful = index >= 0 && args.empty() && exec.func_table[static_cast<size_t>(index)].kind == FuncKind::kVMFunc &&
                  exec.func_table[static_cast<size_t>(index)].num_args > 0;
  auto run = [&] { return stateful ? vm->invoke_stateful(func_name) : vm->invoke(func_name, args); };
  run();  // warm-up: pools filled, caches hot

  // Put back whatever instrument the user had installed, even when the run throws.
  struct ResetInstrument {
    VirtualMachineNode* vm;
    Instrument previous;
    ~ResetInstrument() { vm->set_instrument(std::move(previous)); }
  } reset{vm, vm->instrument()};
  sync_all(vm->devices());
  Clock::time_point origin = Clock::now();
  Collector collector(origin);
  vm->set_instrument([&collector](const CallEvent& e) { collector.on_event(e); });
  run();
  sync_all(vm->devices());
  double wall = micros(Clock::now() - origin);

  auto report = make_object<ProfileReportNode>();
  report->function = func_name;
  report->wall_us = wall;
  report->records = collector.take();
  report->rows = aggregate(report->records);
  return report;
}

ProfileReportNode* report_from_value(const Value& value) {
  Object* obj = value.object_ptr();
  if (value.kind() != ValueKind::kObject || obj == nullptr || obj->type_key() != kProfileReportTypeKey)
    type_error("expected a ", kProfileReportTypeKey, " (from vm[\"profile\"]) but got a ", value.kind_name());
  return static_cast<ProfileReportNode*>(obj);
}

void register_vm_profiling() {
  register_packed("vm.method.profile", [](Args args) -> Value {
    if (args.size() < 2) type_error("profile: expected (func_name, args...) but got ", args.empty() ? 0 : args.size() - 1, " arguments");
    VirtualMachineNode* vm = vm_from_value(args[0]);
    std::string name;
    try {
      name = args[1].as_string();
    } catch (const Error& e) {
      throw Error(e.kind(), str_cat("profile: argument 'func_name': ", e.what()));
    }
    return Value::object(profile(vm, name, args.subspan(2)));
  });
  using Format = std::string (ProfileReportNode::*)() const;
  const std::pair<const char*, Format> formats[] = {{"table", &ProfileReportNode::table},
                                                    {"csv", &ProfileReportNode::csv},
                                                    {"chrome_trace", &ProfileReportNode::chrome_trace},
                                                    {"json", &ProfileReportNode::json}};
  for (const auto& [name, format] : formats) {
    std::string full = std::string("vm.profile_report.") + name;
    register_packed(full, [full, format = format](Args args) -> Value {
      if (args.size() != 1) type_error(full, ": expected 1 argument (report) but got ", args.size());
      return Value((report_from_value(args[0])->*format)());
    });
  }
}

}  // namespace anvil::vm
