# anvil.rpc: the Python RPC client, with Apache TVM's names (tvm.rpc.connect, RPCSession,
# LocalSession, PopenSession, connect_tracker, TrackerSession). Sessions, remote functions, files and remote tensors are the C++
# client (src/anvil/rpc/client.h, bound in bindings/rpc.cc); the tracker client is pure Python
# (tracker.py). Network calls release the GIL.
#
# Remote tensors: `anvil.tensor(np_array, remote_dev)` and `anvil.empty(shape, dtype, remote_dev)`
# work when `remote_dev` came from a session (sess.cpu(0), sess.device(...)): importing this
# package wraps anvil.tensor / anvil.empty so that a RemoteDevice routes to its session; any other
# device goes to the original functions unchanged. `sess.tensor(...)` / `sess.empty(...)` are the
# same operations without the wrapper. Either returns a RemoteTensor (.numpy(), .copyfrom(),
# .copyto(), shape, dtype, device), which passes to remote functions as the server-side tensor;
# anvil.Tensor.copyto(remote_dev) uploads. RemoteModule.time_evaluator times on the server.
"""Remote procedure calls to an Anvil or Apache TVM RPC server (TVM's ``tvm.rpc`` API)."""
import os
import shutil
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np

from .. import _ffi
from .._ffi import Device, Function, Module
from .._tensor import _dtype_name

_C = _ffi.rpc

RPCError = _C.RPCError
RPCSessionTimeoutError = _C.RPCSessionTimeoutError
RemoteTensor = _C.RemoteTensor
_RPCSessionImpl = _C.RPCSession
_Object = _ffi.Object

# DLPack device type codes and TVM's names for them: runtime/device_types.def, through the
# bindings. Hexagon (16) is among them: the server may have one, though this build cannot.
_DEVICE_NAMES = _ffi.device_type_codes()
_CPU, _CUDA, _OPENCL, _VULKAN = (_DEVICE_NAMES[name] for name in ("cpu", "cuda", "opencl", "vulkan"))


class RemoteDevice(Device):
    """A device of an RPC server: an anvil.Device that remembers its session.

    It passes to remote functions as the plain device; ``anvil.tensor(x, dev)`` and
    ``anvil.empty(shape, dtype, dev)`` allocate on the server of its session.
    """

    def __init__(self, session, dev_type, dev_id=0):
        super().__init__(dev_type, dev_id)
        self._rpc_session = session

    @property
    def rpc_session(self):
        return self._rpc_session

    def sync(self):
        """Wait for the device's work on the server to finish."""
        self._rpc_session._impl.sync(Device(self.device_type, self.device_id))

    def __repr__(self):
        return "remote[" + super().__repr__() + "]"


def _unwrap(value):
    if isinstance(value, (RemoteFunction, RemoteModule)):
        return value._raw
    if isinstance(value, RemoteDevice):
        return Device(value.device_type, value.device_id)
    if isinstance(value, (list, tuple)) and any(isinstance(v, (RemoteFunction, RemoteModule, RemoteDevice, list,
                                                                tuple)) for v in value):
        return type(value)(_unwrap(v) for v in value) if isinstance(value, list) else tuple(_unwrap(v) for v in value)
    return value


def _wrap(session, value):
    if isinstance(value, RemoteTensor):
        return value
    if isinstance(value, _Object) and value.type_key == "rpc.RemoteTensor":
        return RemoteTensor.from_object(value)
    if isinstance(value, Function):
        return RemoteFunction(session, value)
    if isinstance(value, Module):
        return RemoteModule(session, value)
    if isinstance(value, list):
        return [_wrap(session, v) for v in value]
    return value


class RemoteFunction:
    """A function on the server. Call it with Python values, RemoteTensors, RemoteDevices, remote
    functions and modules; remote tensors it returns come back as RemoteTensor."""

    def __init__(self, session, raw):
        self._session = session
        self._raw = raw

    def __call__(self, *args):
        return _wrap(self._session, self._raw(*[_unwrap(a) for a in args]))

    @property
    def name(self):
        return self._raw.name

    @property
    def handle(self):
        """The underlying anvil.Function."""
        return self._raw

    def __repr__(self):
        return f"<anvil.rpc.RemoteFunction {self._raw.name}>"


class RemoteModule:
    """A module loaded on the server (load_module, system_lib): ``mod["name"]`` is a RemoteFunction."""

    def __init__(self, session, raw):
        self._session = session
        self._raw = raw

    def get_function(self, name, query_imports=True):
        try:
            f = _C.module_get_function(self._raw, name, query_imports)
        except ValueError as err:
            raise AttributeError(f"Module has no function '{name}': {err}") from err
        return RemoteFunction(self._session, f)

    def __getitem__(self, name):
        return self.get_function(name)

    def time_evaluator(self, func_name, dev, number=10, repeat=1, min_repeat_ms=0, limit_zero_time_iterations=100,
                       cooldown_interval_ms=0, repeats_to_cooldown=1, cache_flush_bytes=0, f_preproc=""):
        """Time ``func_name`` on the server (TVM's ``Module.time_evaluator``, run remotely by
        ``runtime.RPCTimeEvaluator``, so the network is not in the measurement).

        Returns a callable taking the function's arguments (RemoteTensors, ...) that returns a
        BenchmarkResult, as the local time_evaluator does: ``.results`` holds `repeat` values,
        each the mean seconds per call of `number` calls, after one warm-up call.
        `min_repeat_ms` raises `number` until one repeat lasts that long;
        `limit_zero_time_iterations` caps the repeats that measure zero; `cooldown_interval_ms`
        sleeps after every `repeats_to_cooldown` repeats; `cache_flush_bytes` flushes that much
        cache before each repeat; `f_preproc` may be "cache_flush_cpu_non_first_arg".
        """
        from ..runtime.vm import BenchmarkResult

        if isinstance(dev, RemoteDevice) and dev._rpc_session is not self._session:
            raise ValueError("time_evaluator: the device belongs to another RPC session")
        if not isinstance(dev, Device):
            raise TypeError(f"time_evaluator: dev must be a device (e.g. session.cpu(0)), not {type(dev).__name__}")
        feval = self._session._builtin("runtime.RPCTimeEvaluator")(
            self, func_name, dev.device_type, dev.device_id, number, repeat, min_repeat_ms,
            limit_zero_time_iterations, cooldown_interval_ms, repeats_to_cooldown, cache_flush_bytes, f_preproc)

        def evaluator(*args):
            blob = bytes(feval(*args))
            if len(blob) % 8:
                raise RPCError(f"time_evaluator: the server sent {len(blob)} bytes, not a list of float64")
            return BenchmarkResult(struct.unpack(f"@{len(blob) // 8}d", blob))

        return evaluator

    @property
    def handle(self):
        """The underlying anvil.runtime.Module."""
        return self._raw

    def __repr__(self):
        return "<anvil.rpc.RemoteModule>"


# -- RemoteTensor methods (the class is C++: anvil._ffi.rpc.RemoteTensor) --------------------------

def _rt_numpy(self):
    """Copy the remote tensor into a new numpy array."""
    return self._to_host().numpy()


def _rt_copyfrom(self, source):
    """Copy a numpy array, array-like or CPU anvil.Tensor (same shape) into the remote tensor."""
    if isinstance(source, _ffi.Tensor):
        self._copy_from(source)
        return self
    array = np.ascontiguousarray(source, dtype=self.dtype)
    if tuple(array.shape) != tuple(self.shape):
        raise ValueError(f"RemoteTensor.copyfrom: the source has shape {tuple(array.shape)} but the tensor "
                         f"has shape {tuple(self.shape)}")
    self._copy_from(array)
    return self


def _rt_copyto(self, target):
    """Copy the tensor to `target` (TVM's ``Tensor.copyto``) and return the copy.

    `target` is a device — one of this session (the copy stays on the server), of another
    session, or a local one (the data comes back here) — or a tensor of the same shape and dtype
    to fill: a RemoteTensor or a local anvil.Tensor.
    """
    if isinstance(target, RemoteTensor):
        self._copy_to_remote(target)
        return target
    if isinstance(target, _ffi.Tensor):
        target.copyfrom(self.numpy())
        return target
    if isinstance(target, RemoteDevice):
        out = target._rpc_session.empty(self.shape, self.dtype, target)
        self._copy_to_remote(out)
        return out
    if isinstance(target, Device):
        return _ffi_tensor_on(self.numpy(), target)
    raise TypeError(f"RemoteTensor.copyto: target must be a device or a tensor, not {type(target).__name__}")


def _ffi_tensor_on(array, dev):
    pkg = sys.modules[__name__.rpartition(".")[0]]
    return pkg.tensor(array, dev)


def _rt_repr(self):
    return f"<anvil.rpc.RemoteTensor shape={tuple(self.shape)}, dtype={self.dtype}, device=remote[{self.device!r}]>"


RemoteTensor.numpy = _rt_numpy
RemoteTensor.asnumpy = _rt_numpy
RemoteTensor.copyfrom = _rt_copyfrom
RemoteTensor.copyto = _rt_copyto
RemoteTensor.__repr__ = _rt_repr
RemoteTensor.__array__ = lambda self, dtype=None, copy=None: (
    self.numpy() if dtype is None else self.numpy().astype(dtype))
RemoteTensor.ndim = property(lambda self: len(self.shape))
RemoteTensor.__module__ = "anvil.rpc"


class RPCSession:
    """A session with an RPC server (TVM's ``tvm.rpc.RPCSession``); from connect() or a tracker.

    The server ends the session when this object is closed or garbage-collected. Errors raised on
    the server come back as RPCError (also an instance of the remote Python type when the server
    named one, e.g. ValueError); an expired session_timeout raises RPCSessionTimeoutError.
    """

    def __init__(self, impl):
        self._impl = impl
        self._remote_funcs = {}

    # -- functions ----------------------------------------------------------------------------
    def get_function(self, name):
        """The server's global function `name` as a RemoteFunction (AttributeError when missing)."""
        raw = self._impl.find_function(name)
        if raw is None:
            raise AttributeError(f"RPC server has no function '{name}'")
        return RemoteFunction(self, raw)

    def _builtin(self, name):
        f = self._remote_funcs.get(name)
        if f is None:
            f = self._remote_funcs[name] = self.get_function(name)
        return f

    # -- devices ------------------------------------------------------------------------------
    def device(self, dev_type, dev_id=0):
        """A RemoteDevice: `dev_type` is a DLPack code or a name such as "cpu", "cuda:1"."""
        if isinstance(dev_type, str):
            name, _, index = dev_type.partition(":")
            if index:
                dev_id = int(index)
            if name not in _DEVICE_NAMES:
                raise ValueError(f"RPCSession.device: unknown device '{dev_type}'")
            dev_type = _DEVICE_NAMES[name]
        elif isinstance(dev_type, Device):
            dev_type, dev_id = dev_type.device_type, dev_type.device_id
        return RemoteDevice(self, int(dev_type), int(dev_id))

    def cpu(self, dev_id=0):
        return self.device(_CPU, dev_id)

    def cuda(self, dev_id=0):
        return self.device(_CUDA, dev_id)

    gpu = cuda

    def cl(self, dev_id=0):
        return self.device(_OPENCL, dev_id)

    opencl = cl

    def vulkan(self, dev_id=0):
        return self.device(_VULKAN, dev_id)

    # -- tensors ------------------------------------------------------------------------------
    def _plain(self, dev):
        if dev is None:
            return Device(_CPU, 0)
        if isinstance(dev, RemoteDevice) and dev._rpc_session is not self:
            raise ValueError("the device belongs to another RPC session")
        return Device(dev.device_type, dev.device_id)

    def empty(self, shape, dtype="float32", dev=None):
        """An uninitialised RemoteTensor on the server."""
        if isinstance(shape, int):
            shape = (shape,)
        return self._impl.empty([int(d) for d in shape], _dtype_name(dtype), self._plain(dev))

    def tensor(self, data, dev=None, dtype=None):
        """Copy array-like data (or a CPU anvil.Tensor) into a new RemoteTensor on `dev`."""
        if isinstance(data, _ffi.Tensor) and dtype is None:
            data = data.numpy()
        array = np.ascontiguousarray(data, dtype=None if dtype is None else _dtype_name(dtype))
        return self._impl.upload_tensor(array, self._plain(dev))

    # -- files and modules ----------------------------------------------------------------------
    def upload(self, data, target=None):
        """Upload a local file (path) or bytes into the server's session directory."""
        if isinstance(data, (bytes, bytearray, memoryview)):
            if not target:
                raise ValueError("upload: target must be given when uploading bytes")
            self._impl.upload_bytes(bytes(data), target)
        else:
            self._impl.upload(os.fspath(data), target or "")

    def download(self, path):
        """The contents (bytes) of a file in the server's session directory."""
        return self._impl.download(path)

    def remove(self, path):
        """Remove a file or directory from the server's session directory."""
        self._impl.remove(path)

    def listdir(self, path="."):
        """The entries of a directory of the session directory, as a list of paths.

        (TVM returns the server's comma-joined string; this returns it split.)"""
        return list(self._impl.listdir(path))

    def load_module(self, path):
        """Load a module uploaded into the session directory; returns a RemoteModule."""
        return RemoteModule(self, self._impl.load_module(path))

    def download_linked_module(self, path):
        """Link the uploaded object file `path` into a shared library on the server; its bytes."""
        return self._impl.download_linked_module(path)

    def system_lib(self):
        """The server's system library module (RemoteModule)."""
        return RemoteModule(self, self._impl.system_lib())

    # -- lifetime -----------------------------------------------------------------------------
    @property
    def is_open(self):
        return self._impl.is_open

    def close(self):
        """End the session (the server then serves its next client)."""
        self._remote_funcs.clear()
        self._impl.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<anvil.rpc.RPCSession key={self._impl.remote_key!r}>"


def connect(url, port, key="", session_timeout=0, session_constructor_args=None, auth_token=None):
    """Connect to an RPC server (TVM's ``tvm.rpc.connect``).

    Parameters
    ----------
    url, port : str, int
        The server (or proxy) address.
    key : str
        The key the server expects ("" for a server started without one).
    session_timeout : float
        Seconds after which the server ends the session (0: never); calls then raise
        RPCSessionTimeoutError.
    session_constructor_args : list, optional
        What the server runs to make the session (TVM's argument): ``["rpc.Connect", url2,
        port2, key2, enable_logging]`` makes the server at url:port a gateway to the server at
        url2:port2, which this machine may not reach (a multi-hop session, see docs/rpc.md);
        more items after enable_logging are the next hop's own constructor, so hops chain.
        Strings, ints, floats, bools and None.
    auth_token : str, optional
        The server's ``--auth-token`` (an Anvil extension; see docs/rpc.md). None: the value of
        $ANVIL_RPC_AUTH_TOKEN when set, else no token; "": no token. With a token, a server that
        cannot prove it knows the token is refused too.

    Raises
    ------
    OSError
        When the server cannot be reached.
    RuntimeError
        When the server refuses the key.
    """
    if session_constructor_args is not None and not isinstance(session_constructor_args, (list, tuple)):
        raise TypeError("connect: session_constructor_args must be a list or tuple")
    ctor = list(session_constructor_args) if session_constructor_args else []
    return RPCSession(
        _RPCSessionImpl.connect(str(url), int(port), str(key), float(session_timeout), auth_token=auth_token,
                                session_constructor_args=ctor)
    )


class LocalSession(RPCSession):
    """An RPCSession served in this process (TVM's ``tvm.rpc.LocalSession``).

    The server runs on a thread of this process and speaks the RPC protocol with the client over a
    socketpair, so code written for a remote device runs unchanged without one: same methods,
    RemoteTensors, errors. The session has its own temporary work directory (``upload``,
    ``listdir``, ``load_module`` ... act there), removed by ``close()``; unlike TVM's, the
    ``tvm.rpc.server.*`` functions are bound to that directory for this session only, so several
    LocalSessions can coexist. Close it (or use ``with``) rather than leaving it to the garbage
    collector: closing waits for the serving thread with the GIL released.

    Parameters
    ----------
    work_root : str or PathLike, optional
        Where to create the work directory (default: $TMPDIR, else /tmp).
    verbose : bool
        Log the session's server-side INFO lines (each upload, each module load) to stderr, as a
        server would; by default only warnings and errors are printed.
    """

    def __init__(self, work_root=None, verbose=False):
        super().__init__(_RPCSessionImpl.local(os.fspath(work_root) if work_root is not None else "",
                                               verbose=bool(verbose)))

    def __repr__(self):
        return "<anvil.rpc.LocalSession>"


def _find_anvil_rpc():
    """The anvil-rpc command: $ANVIL_RPC_BIN, next to the package (a build tree's bin/, or bin/
    inside an installed package), else on PATH. None when there is none."""
    env = os.environ.get("ANVIL_RPC_BIN")
    if env:
        return env
    package = Path(__file__).resolve().parents[1]  # .../anvil
    for candidate in (package / "bin" / "anvil-rpc", package.parents[1] / "bin" / "anvil-rpc"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("anvil-rpc")


class PopenSession(RPCSession):
    """An RPCSession with a server started as a child process, over pipes (TVM's
    ``tvm.rpc.PopenSession``).

    Parameters
    ----------
    binary : str, PathLike, bytes or None
        The server program. None (default): Anvil's ``anvil-rpc`` (see ``_find_anvil_rpc``:
        $ANVIL_RPC_BIN, next to the package, else PATH). A path: that executable. Bytes: the
        contents of an executable, written to a temporary file and run, as TVM does (the file is
        removed once the child has started).
    pipe_args : "anvil" or "tvm"
        How the child learns its two pipe descriptors. "anvil" (default) runs
        ``binary server [--silent] [server_args...] --pipe-fds R,W``; "tvm" runs
        ``binary [server_args...] R W`` (TVM's convention: the descriptors are the last two
        arguments, as TVM's minrpc servers expect).
    server_args : sequence of str
        Extra arguments for the server, e.g. ``["--load-library", "ext.so"]``.
    exit_timeout : float
        Seconds the child has, after the session is closed, to exit before it (and its process
        group) is killed. Either way it is reaped: closing leaves no zombie.
    silent : bool
        With pipe_args="anvil": pass ``--silent`` (the server logs errors only, to our stderr).

    If the child dies mid-session, the next call raises an error that says how it died (exit
    status or signal) instead of waiting. ``pid`` is the child's process id.
    """

    def __init__(self, binary=None, pipe_args="anvil", server_args=(), exit_timeout=5.0, silent=True):
        if pipe_args not in ("anvil", "tvm"):
            raise ValueError(f"PopenSession: pipe_args must be 'anvil' or 'tvm', not {pipe_args!r}")
        temp = None
        if binary is None:
            path = _find_anvil_rpc()
            if path is None:
                raise RuntimeError("PopenSession: no anvil-rpc command found (build it, put it on PATH, or set "
                                   "ANVIL_RPC_BIN, or pass binary=)")
        elif isinstance(binary, (bytes, bytearray, memoryview)):
            temp = tempfile.mkdtemp(prefix="anvil-popen-")
            path = os.path.join(temp, "server.bin")
            with open(path, "wb") as out:
                out.write(binary)
            os.chmod(path, 0o500)
        else:
            path = os.path.abspath(os.fspath(binary))
            if not os.path.isfile(path):
                raise RuntimeError(f"PopenSession: {path} does not exist.")
            if not os.access(path, os.X_OK):
                raise RuntimeError(f"PopenSession: {path} is not executable.")
        extra = [str(a) for a in server_args]
        if pipe_args == "anvil":
            command = [path, "server"] + (["--silent"] if silent else []) + extra
        else:
            command = [path] + extra
        try:
            impl, self.pid = _RPCSessionImpl.popen(command, pipe_args == "tvm", float(exit_timeout))
        finally:
            if temp is not None:  # the running child keeps its executable
                shutil.rmtree(temp, ignore_errors=True)
        super().__init__(impl)

    def __repr__(self):
        return f"<anvil.rpc.PopenSession pid={self.pid}>"


from .tracker import TrackerSession, connect_tracker  # noqa: E402
from .server import Server  # noqa: E402


# -- anvil.tensor / anvil.empty on remote devices ---------------------------------------------------
def _install_remote_dispatch():
    pkg = sys.modules[__name__.rpartition(".")[0]]
    local_tensor, local_empty = pkg.tensor, pkg.empty
    if getattr(local_tensor, "_anvil_rpc_dispatch", False):
        return

    def tensor(data, device=None, dtype=None):
        if isinstance(device, RemoteDevice):
            return device._rpc_session.tensor(data, device, dtype)
        return local_tensor(data, device, dtype)

    def empty(shape, dtype="float32", device=None):
        if isinstance(device, RemoteDevice):
            return device._rpc_session.empty(shape, dtype, device)
        return local_empty(shape, dtype, device)

    for new, old in ((tensor, local_tensor), (empty, local_empty)):
        new.__doc__ = (old.__doc__ or "") + "\n    A device from an RPC session (anvil.rpc) allocates on its server.\n"
        new.__name__, new.__qualname__, new.__module__ = old.__name__, old.__qualname__, "anvil"
        new._anvil_rpc_dispatch = True
    pkg.tensor, pkg.empty = tensor, empty

    # Tensor.copyto(remote_dev) uploads, as in TVM (a RemoteDevice is also a Device: without
    # this the copy would land on the local device of that type).
    local_copyto = _ffi.Tensor.copyto

    def copyto(self, target):
        if isinstance(target, RemoteDevice):
            return target._rpc_session.tensor(self, target)
        if isinstance(target, RemoteTensor):
            return target.copyfrom(self)
        return local_copyto(self, target)

    copyto.__doc__ = (local_copyto.__doc__ or "") + "\n\nA device or tensor of an RPC session: copies to its server."
    _ffi.Tensor.copyto = copyto



_install_remote_dispatch()

__all__ = [
    "LocalSession",
    "PopenSession",
    "RPCError",
    "RPCSession",
    "RPCSessionTimeoutError",
    "RemoteDevice",
    "RemoteFunction",
    "RemoteModule",
    "RemoteTensor",
    "TrackerSession",
    "connect",
    "connect_tracker",
]
