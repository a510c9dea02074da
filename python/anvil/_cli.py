# The console commands of an installed package ([project.scripts] in pyproject.toml): each one
# replaces itself (exec) with the native program shipped in the package's bin/ folder, so
# `anvil-rpc ...` on the user's PATH runs the C++ binary itself, with the same arguments, the same
# process id and the same open descriptors (PopenSession's --pipe-fds needs them inherited).
"""Console entry points: ``anvil`` and ``anvil-rpc`` run the binaries shipped in the package."""
import os
import sys
from pathlib import Path


def _binary(name):
    return Path(__file__).resolve().parent / "bin" / name


def _exec(name):
    path = _binary(name)
    if not (path.is_file() and os.access(path, os.X_OK)):
        sys.stderr.write(f"{name}: this installation of the anvil package has no {path} "
                         f"(reinstall it with `pip install .` from an Anvil checkout)\n")
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, [name] + sys.argv[1:])
    return 127  # not reached: execv either replaces the process or raises OSError


def anvil_main():
    """``anvil``: compile, run and inspect models."""
    return _exec("anvil")


def rpc_main():
    """``anvil-rpc``: the RPC server, tracker, proxy and query command."""
    return _exec("anvil-rpc")
