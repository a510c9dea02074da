# anvil.target: Target (TVM's tvm.target.Target), what code is generated for, parsed by the C++
# parser (src/anvil/target/target.h, kinds and options in target_kinds.def).
"""Targets: ``Target("llvm -mcpu=znver4")``, ``Target("vulkan", host="llvm")``."""
from . import _ffi

_te = _ffi.te


class TargetKind:
    """The kind of a target (``target.kind.name``: "llvm", "c", "vulkan", "cuda", "opencl")."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, TargetKind) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"TargetKind({self.name!r})"


def _dict_text(config):
    """TVM's dict form ``{"kind": "llvm", "mcpu": "znver4", "host": ...}`` as target text."""
    if "kind" not in config:
        raise ValueError(f"Target: a dict target needs a 'kind', got keys {sorted(config)}")
    parts = [str(config["kind"])]
    host = None
    for key, value in config.items():
        if key in ("kind", "tag", "keys"):
            continue
        if key == "host":
            host = value
        elif value is True:
            parts.append(f"-{key}")
        elif isinstance(value, (list, tuple)):
            parts.append(f"-{key}=" + ",".join(str(v) for v in value))
        else:
            parts.append(f"-{key}={'false' if value is False else value}")
    return " ".join(parts), host


def _text(target):
    if isinstance(target, Target):
        return str(target), None
    if isinstance(target, dict):
        return _dict_text(target)
    if isinstance(target, str):
        return target, None
    raise TypeError(f"Target: expected a str, dict or Target, got {type(target).__name__}")


class Target:
    """What code is generated for, parsed from TVM's text form.

    ``Target("llvm -mcpu=znver4 -num-cores=4")``, ``Target("c")``, ``Target({"kind": "llvm",
    "mcpu": "znver4"})``. A device target (``vulkan``, ``cuda``, ``opencl``) may name a host
    target, the CPU code around its kernels: ``Target("vulkan -from_device=0", host="llvm")``,
    the same as the text ``"vulkan -from_device=0 -host=llvm"`` (the host takes the rest of the
    string). ``llvm`` and ``c`` are their own host (``host=`` equal to the target is accepted).

    Attributes
    ----------
    kind : TargetKind
        ``target.kind.name`` is the kind's name.
    host : Target or None
        The host that was given (TVM's convention: None when none was; a device target without
        one is built with the host ``llvm``).
    attrs : dict
        The options given, by key (``{"mcpu": "znver4", "num-cores": 4}``).

    ``str(target)`` is canonical (options in a fixed order, the host last) and parses back to an
    equal target; equal targets hash equal. Raises ValueError naming the bad part for an unknown
    kind or option, a malformed value, or a host that is not of kind ``llvm``/``c``.
    """

    __slots__ = ("_info",)

    def __init__(self, target, host=None):
        text, dict_host = _text(target)
        if host is None:
            host = dict_host
        if isinstance(target, Target) and host is None:
            self._info = target._info
            return
        host_text = None if host is None else _text(host)[0]
        self._info = _te.target_parse(text, host_text)

    @property
    def kind(self):
        return TargetKind(self._info["kind"])

    @property
    def host(self):
        host = self._info["host"]
        return None if host is None else Target(host)

    @property
    def attrs(self):
        return dict(self._info["attrs"])

    def with_host(self, host=None):
        """A copy with `host` as the host target (TVM's Target.with_host); None removes it."""
        device = self._info["str"].split(" -host=")[0]
        return Target(device) if host is None else Target(device, host=host)

    @staticmethod
    def list_kinds():
        """The target kinds the parser knows."""
        return list(_te.target_kinds())

    def __str__(self):
        return self._info["str"]

    def __repr__(self):
        return f"anvil.target.Target({self._info['str']!r})"

    def __eq__(self, other):
        return isinstance(other, Target) and str(other) == str(self)

    def __hash__(self):
        return hash(self._info["str"])


__all__ = ["Target", "TargetKind"]
