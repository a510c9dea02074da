// anvil._ffi.rpc: the C++ RPC client (src/anvil/rpc/client.h) for the Python package anvil.rpc.
//   RPCSession    connect (TCP), local (in process) and popen (child over pipes, spawn_session.h);
//                 functions, files, modules, remote tensors (GIL released on the network)
//   RemoteTensor  a tensor in the server's memory; a subclass of anvil.runtime.Object, so it passes
//                 to remote functions as the object it wraps
//   RPCError, RPCSessionTimeoutError  the Python faces of the C++ errors of the same names; a
//                 remote error of another kind (ValueError, ...) is raised as a subclass of both
//                 RPCError and that Python type.
//   tracker_codes(), TRACKER_MAGIC  the tracker protocol's codes and magic (rpc/tracker_codes.*)
//                 for anvil.rpc.tracker.
// Remote objects that remote functions return come back as anvil.runtime.Object with type_key
// "rpc.RemoteTensor"; RemoteTensor.from_object (used by anvil.rpc) turns them into RemoteTensors.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "anvil/rpc/client.h"
#include "anvil/rpc/protocol.h"
#include "anvil/rpc/spawn_session.h"
#include "anvil/rpc/tracker_codes.h"
#include "bindings.h"
#include "object_ref.h"

namespace anvil::python {
namespace {

namespace rpc = anvil::rpc;

struct PyRemoteTensor : ObjectRef {};

PyObject* g_rpc_error = nullptr;
PyObject* g_rpc_timeout_error = nullptr;
PyObject* g_rpc_kind_errors[8] = {};  // RPCError subclasses by ErrorKind

PyObject* make_exception(const char* name, std::vector<PyObject*> bases, const char* doc) {
  nb::object tuple = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(bases.size())));
  for (size_t i = 0; i < bases.size(); ++i) {
    Py_INCREF(bases[i]);
    PyTuple_SET_ITEM(tuple.ptr(), static_cast<Py_ssize_t>(i), bases[i]);
  }
  PyObject* type = PyErr_NewExceptionWithDoc(name, doc, tuple.ptr(), nullptr);
  if (type == nullptr) throw nb::python_error();
  return type;
}

PyObject* rpc_error_type(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kValue:
    case ErrorKind::kType:
    case ErrorKind::kIndex:
    case ErrorKind::kNotImplemented:
    case ErrorKind::kIO:
      return g_rpc_kind_errors[static_cast<int>(kind) & 7];
    default:
      return g_rpc_error;
  }
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const rpc::RPCSessionTimeoutError& e) {
    PyErr_SetString(g_rpc_timeout_error, e.what());
  } catch (const rpc::RPCError& e) {
    PyObject* type = rpc_error_type(e.kind());
    PyErr_SetString(type != nullptr ? type : g_rpc_error, e.what());
  }
  // Anything else propagates to the next translator (errors.cc).
}

rpc::RemoteTensor as_remote(const ObjectRef& obj) {
  auto t = rpc::RemoteTensor::from_value(Value::object(obj.ref));
  if (!t) type_error("expected an rpc.RemoteTensor, got an object of type '", obj.ref->type_key(), "'");
  return *t;
}

PyRemoteTensor wrap(const rpc::RemoteTensor& t) {
  PyRemoteTensor out;
  out.ref = Ref<Object>(t.value().as_object());
  return out;
}

Tensor host_tensor(nb::handle source) {
  if (nb::isinstance<Tensor>(source)) return nb::cast<const Tensor&>(source);
  if (is_numpy_array(source)) return tensor_from_numpy(source);
  type_error("expected an anvil.Tensor or a numpy array, got '", Py_TYPE(source.ptr())->tp_name, "'");
}

nb::bytes to_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

}  // namespace

void init_rpc(nb::module_& m) {
  nb::module_ sub = m.def_submodule("rpc", "The RPC client (use anvil.rpc instead).");

  g_rpc_error = make_exception("anvil.rpc.RPCError", {PyExc_RuntimeError},
                               "An error raised on the remote side of an RPC call.");
  g_rpc_timeout_error = make_exception("anvil.rpc.RPCSessionTimeoutError", {g_rpc_error, PyExc_TimeoutError},
                                       "The server ended the session because its session_timeout expired.");
  const std::pair<ErrorKind, PyObject*> kinds[] = {{ErrorKind::kValue, PyExc_ValueError},
                                                   {ErrorKind::kType, PyExc_TypeError},
                                                   {ErrorKind::kIndex, PyExc_IndexError},
                                                   {ErrorKind::kNotImplemented, PyExc_NotImplementedError},
                                                   {ErrorKind::kIO, PyExc_OSError}};
  for (const auto& [kind, base] : kinds)
    g_rpc_kind_errors[static_cast<int>(kind) & 7] =
        make_exception("anvil.rpc.RPCError", {g_rpc_error, base}, "A remote error of a specific Python kind.");
  sub.attr("RPCError") = nb::handle(g_rpc_error);
  sub.attr("RPCSessionTimeoutError") = nb::handle(g_rpc_timeout_error);
  nb::register_exception_translator(translate);

  sub.def(
      "tracker_codes",
      [] {
        nb::dict codes;
        for (const rpc::TrackerCodeName& entry : rpc::kTrackerCodeNames)
          codes[nb::str(entry.name.data(), entry.name.size())] = static_cast<int>(entry.code);
        return codes;
      },
      "The tracker protocol's codes, {name: value} (src/anvil/rpc/tracker_codes.def).");
  sub.attr("TRACKER_MAGIC") = rpc::kRPCTrackerMagic;

  sub.def(
      "module_get_function",
      [](const Module& mod, const std::string& name, bool query_imports) {
        nb::gil_scoped_release release;  // a remote module asks its server
        return mod.get_function(name, query_imports);
      },
      nb::arg("module"), nb::arg("name"), nb::arg("query_imports") = true);

  nb::class_<PyRemoteTensor, ObjectRef>(sub, "RemoteTensor", "A tensor in an RPC server's memory.")
      .def_static(
          "from_object", [](const ObjectRef& obj) { return wrap(as_remote(obj)); },
          "The RemoteTensor for an anvil.runtime.Object of type_key 'rpc.RemoteTensor'.")
      .def_prop_ro("shape",
                   [](const PyRemoteTensor& t) {
                     const auto& dims = as_remote(t).shape();
                     nb::list out;
                     for (int64_t d : dims) out.append(d);
                     return nb::tuple(out);
                   })
      .def_prop_ro("dtype", [](const PyRemoteTensor& t) { return as_remote(t).dtype().to_string(); })
      .def_prop_ro("device", [](const PyRemoteTensor& t) { return as_remote(t).device(); })
      .def_prop_ro("nbytes", [](const PyRemoteTensor& t) { return as_remote(t).nbytes(); })
      .def(
          "_to_host",
          [](const PyRemoteTensor& t) {
            rpc::RemoteTensor r = as_remote(t);
            nb::gil_scoped_release release;
            return r.to_host();
          },
          "Copies the tensor into a new CPU anvil.Tensor.")
      .def(
          "_copy_from",
          [](const PyRemoteTensor& t, nb::handle source) {
            rpc::RemoteTensor r = as_remote(t);
            Tensor host = host_tensor(source);
            nb::gil_scoped_release release;
            r.copy_from(host);
          },
          "Copies a CPU tensor or numpy array (same shape and dtype) into the remote tensor.")
      .def(
          "_copy_to_remote",
          [](const PyRemoteTensor& t, const PyRemoteTensor& dst) {
            rpc::RemoteTensor from = as_remote(t), to = as_remote(dst);
            nb::gil_scoped_release release;
            from.copy_to(to);
          },
          "Copies into another remote tensor: on the server when both are in one session.");

  nb::class_<rpc::RPCSession>(sub, "RPCSession", "A session with an RPC server (Anvil or Apache TVM).")
      .def_static(
          "connect",
          [](const std::string& url, int port, const std::string& key, double session_timeout,
             std::optional<std::string> auth_token, nb::list session_constructor_args) {
            rpc::ConnectOptions options;
            options.auth_token = std::move(auth_token);  // None: $ANVIL_RPC_AUTH_TOKEN if set
            for (nb::handle item : session_constructor_args) options.session_constructor_args.push_back(to_value(item));
            nb::gil_scoped_release release;
            return rpc::RPCSession::connect(url, port, key, session_timeout, options);
          },
          nb::arg("url"), nb::arg("port"), nb::arg("key") = "", nb::arg("session_timeout") = 0.0,
          nb::arg("auth_token") = nb::none(), nb::arg("session_constructor_args") = nb::list())
      .def_static(
          "local",
          [](const std::string& work_root, bool verbose) {
            rpc::LocalConnectOptions o;
            o.work_root = work_root;
            o.verbose = verbose;
            nb::gil_scoped_release release;
            return rpc::connect_local(o);
          },
          nb::arg("work_root") = "", nb::arg("verbose") = false, "An in-process session (rpc::connect_local).")
      .def_static(
          "popen",
          [](const std::vector<std::string>& command, bool tvm_pipe_args, double exit_timeout) {
            rpc::PopenOptions o;
            o.pipe_args = tvm_pipe_args ? rpc::PipeArgs::kTvm : rpc::PipeArgs::kAnvil;
            o.exit_timeout_ms = static_cast<int>(std::clamp(exit_timeout * 1000.0, 0.0, 2.0e9));
            int pid = 0;
            nb::gil_scoped_release release;
            rpc::RPCSession s = rpc::connect_popen(command, o, &pid);
            return std::make_pair(std::move(s), pid);
          },
          nb::arg("command"), nb::arg("tvm_pipe_args") = false, nb::arg("exit_timeout") = 5.0,
          "A session with a child server process over pipes (rpc::connect_popen): (session, pid).")
      .def_prop_ro("is_open", &rpc::RPCSession::is_open)
      .def_prop_ro("remote_key", [](const rpc::RPCSession& s) { return s.remote_key(); })
      .def("close",
           [](rpc::RPCSession& s) {
             nb::gil_scoped_release release;
             s.close();
           })
      .def("get_function",
           [](rpc::RPCSession& s, const std::string& name) {
             nb::gil_scoped_release release;
             return s.get_function(name);
           })
      .def("find_function",
           [](rpc::RPCSession& s, const std::string& name) -> nb::object {
             std::optional<Function> f;
             {
               nb::gil_scoped_release release;
               f = s.find_function(name);
             }
             return f ? nb::cast(*f) : nb::none();
           })
      .def("sync",
           [](rpc::RPCSession& s, Device dev) {
             nb::gil_scoped_release release;
             s.sync(dev);
           })
      .def("empty",
           [](rpc::RPCSession& s, const std::vector<int64_t>& shape, const std::string& dtype, Device dev) {
             DataType t = DataType::parse(dtype);
             rpc::RemoteTensor r;
             {
               nb::gil_scoped_release release;
               r = s.empty(shape, t, dev);
             }
             return wrap(r);
           })
      .def("upload_tensor",
           [](rpc::RPCSession& s, nb::handle source, Device dev) {
             Tensor host = host_tensor(source);
             rpc::RemoteTensor r;
             {
               nb::gil_scoped_release release;
               r = s.upload_tensor(host, dev);
             }
             return wrap(r);
           })
      .def("upload",
           [](rpc::RPCSession& s, const std::string& path, const std::string& target) {
             nb::gil_scoped_release release;
             s.upload(path, target);
           })
      .def("upload_bytes",
           [](rpc::RPCSession& s, nb::bytes data, const std::string& target) {
             std::string copy(data.c_str(), data.size());
             nb::gil_scoped_release release;
             s.upload_bytes(copy, target);
           })
      .def("download",
           [](rpc::RPCSession& s, const std::string& path) {
             std::string data;
             {
               nb::gil_scoped_release release;
               data = s.download(path);
             }
             return to_bytes(data);
           })
      .def("remove",
           [](rpc::RPCSession& s, const std::string& path) {
             nb::gil_scoped_release release;
             s.remove(path);
           })
      .def("listdir",
           [](rpc::RPCSession& s, const std::string& path) {
             nb::gil_scoped_release release;
             return s.listdir(path);
           })
      .def("load_module",
           [](rpc::RPCSession& s, const std::string& path) {
             nb::gil_scoped_release release;
             return s.load_module(path);
           })
      .def("download_linked_module",
           [](rpc::RPCSession& s, const std::string& path) {
             std::string data;
             {
               nb::gil_scoped_release release;
               data = s.download_linked_module(path);
             }
             return to_bytes(data);
           })
      .def("system_lib", [](rpc::RPCSession& s) {
        nb::gil_scoped_release release;
        return s.system_lib();
      });
}

}  // namespace anvil::python
