# Every fenced code block in README.md and docs/*.md runs as written, so a doc that drifts fails
# the suite. The rules (also in docs/design.md, "Documentation that runs"):
# - Every block names its language: python, sh, cpp, c or text. `text` is not code (output,
#   wire layouts, directory trees) and is the only kind not run; a block with no language fails.
# - A page is a tutorial: its blocks run top to bottom in one fresh directory, each in a fresh
#   process, so files one block writes (a kernel library) are there for the next.
# - python runs with the build's package; sh runs under bash -euo pipefail with the build's
#   commands on PATH (`scripts/...` means the repository's scripts); the cpp blocks of a page are
#   one program body, in order (#include lines at file scope, the rest inside main), compiled
#   against the runtime and run where the page's last cpp block stands; a c block is declarations that must compile and agree in layout with the ABI header
#   (src/anvil/runtime/c_abi.h).
# - Farm examples name placeholder hosts (tracker-host, proxy-host) and listen on 0.0.0.0: both
#   become 127.0.0.1 here. In an sh block, a line starting `anvil-rpc tracker|proxy|server` runs
#   in the background (as a person would start it in another terminal) until the next sh block
#   starts or the page ends, so the python blocks after it use that farm.
# - `scripts/test.sh` is the suite that runs this file: a line invoking it is syntax-checked
#   instead of run.
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import anvil

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```(\S*)\n(.*?)^```\s*$", re.S | re.M)
LANGUAGES = {"python", "sh", "cpp", "c", "text"}
# Pages that teach by example: each must keep at least one block that runs.
MUST_HAVE_CODE = {"README.md", "python.md", "rpc.md", "vm.md", "abi.md"}
BACKGROUND = re.compile(r"^\s*((?:\w+=\S+\s+)*)anvil-rpc\s+(tracker|proxy|server)\b(.*)$")


def blocks_of(page):
    text = page.read_text()
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out.append((m.group(1), m.group(2), f"{page.relative_to(ROOT)}:{line}"))
    return out


def build_dir():
    # The package imported here is the build tree's (build/python/anvil): its parent holds bin/, lib/.
    return Path(anvil.__file__).resolve().parents[2]


def localize(code):
    """Placeholder hosts and wildcard listens become loopback."""
    for host in ("tracker-host", "proxy-host", "0.0.0.0"):
        code = code.replace(host, "127.0.0.1")
    return code


def doc_env():
    env = dict(os.environ)
    env["PATH"] = str(build_dir() / "bin") + os.pathsep + env.get("PATH", "")
    package_root = str(Path(anvil.__file__).resolve().parents[1])
    env["PYTHONPATH"] = package_root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def wait_for_port(port, proc, where, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{where}: background command exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"{where}: nothing listened on port {port} within {timeout} s")


def struct_fields(body):
    """Field names of a C struct body: `int32_t a, b;` and `void (*f)(int);` forms."""
    body = re.sub(r"//[^\n]*|/\*.*?\*/", "", body, flags=re.S)
    names = []
    for decl in filter(None, (d.strip() for d in body.split(";"))):
        pointer = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
        if pointer:
            names.append(pointer.group(1))
            continue
        parts = [p.strip() for p in decl.split(",")]
        names.append(re.findall(r"\w+", parts[0])[-1])
        names += [re.findall(r"\w+", p)[0] for p in parts[1:]]
    return names


class Page:
    """Runs one page's blocks in order in one directory; owns the background processes."""

    def __init__(self, workdir, cpp_total):
        self.workdir = workdir
        self.cpp_blocks, self.cpp_total = [], cpp_total
        self.env = doc_env()
        self.background = []

    def stop_background(self):
        for proc in self.background:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.background:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.background = []

    def check(self, proc, where, code):
        assert proc.returncode == 0, (f"{where}: the example failed (exit {proc.returncode})\n--- code\n{code}"
                                      f"\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")

    def run_python(self, code, where):
        proc = subprocess.run([sys.executable, "-c", localize(code)], cwd=self.workdir, env=self.env,
                              capture_output=True, text=True, timeout=300)
        self.check(proc, where, code)

    def start_background(self, line, where):
        m = BACKGROUND.match(line)
        log = open(self.workdir / f"background-{len(self.background)}.log", "w")
        proc = subprocess.Popen(["bash", "-c", "exec " + line], cwd=self.workdir, env=self.env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        self.background.append(proc)
        args = shlex.split(m.group(3))
        listens = m.group(2) != "server" or "--through-proxy" not in args
        if listens and "--port" in args:
            wait_for_port(int(args[args.index("--port") + 1]), proc, where)
        else:
            time.sleep(0.5)

    def run_sh(self, code, where):
        self.stop_background()
        script = []
        for line in localize(code).splitlines():
            words = line.split("#")[0].split()
            if BACKGROUND.match(line):
                if script:
                    self.run_script("\n".join(script), where, code)
                    script = []
                self.start_background(line, where)
            elif words and words[0] == "scripts/test.sh":
                subprocess.run(["bash", "-n", str(ROOT / "scripts" / "test.sh")], check=True)
            else:
                script.append(re.sub(r"(^|\s)scripts/", lambda g: g.group(1) + str(ROOT / "scripts") + "/", line))
        if script:
            self.run_script("\n".join(script), where, code)

    def run_script(self, script, where, code):
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=self.workdir, env=self.env,
                              capture_output=True, text=True, timeout=600)
        self.check(proc, where, code)

    def compile_and_run(self, source, where, code, run=True):
        src = self.workdir / "doc_block.cc"
        exe = self.workdir / "doc_block"
        src.write_text(source)
        lib = build_dir() / "lib"
        cxx = os.environ.get("CXX", "c++")
        cmd = [cxx, "-std=c++20", "-I", str(ROOT / "src"), str(src)]
        cmd += ["-o", str(exe), f"-L{lib}", f"-Wl,-rpath,{lib}", "-lanvil_runtime"] if run else ["-fsyntax-only"]
        proc = subprocess.run(cmd, cwd=self.workdir, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{where}: the example does not compile\n--- code\n{code}\n{proc.stderr}"
        if run:
            proc = subprocess.run([str(exe)], cwd=self.workdir, env=self.env, capture_output=True, text=True,
                                  timeout=300)
            self.check(proc, where, code)

    def run_cpp(self, code, where):
        self.cpp_blocks.append(code)
        if len(self.cpp_blocks) < self.cpp_total:
            return
        code = "\n".join(self.cpp_blocks)
        includes = [line for line in code.splitlines() if line.startswith("#include")]
        body = [line for line in code.splitlines() if not line.startswith("#include")]
        source = "\n".join(includes + [
            "#include <exception>", "#include <iostream>",
            "int main() {", "try {", *body,
            "} catch (const std::exception& e) { std::cerr << e.what() << '\\n'; return 1; }",
            "return 0;", "}", ""])
        self.compile_and_run(source, where, code)

    def run_c(self, code, where):
        # The block's declarations, in a namespace of their own, must match the header's.
        structs = [n for n in re.findall(r"\}\s*(\w+)\s*;", code) if n.startswith("Anvil")]
        pointers = [n for n in re.findall(r"^typedef[^;{]*\(\s*\*\s*(\w+)\s*\)", code, re.M) if n.startswith("Anvil")]
        assert structs or pointers, f"{where}: a c block declares none of the ABI's Anvil* types"
        checks = []
        for name in structs:
            checks.append(f"static_assert(sizeof(doc_block::{name}) == sizeof(::{name}), \"{name}: size\");")
            checks.append(f"static_assert(alignof(doc_block::{name}) == alignof(::{name}), \"{name}: alignment\");")
        for name, body in re.findall(r"typedef\s+struct\s+(Anvil\w+)\s*\{(.*?)\}", code, re.S):
            for field in struct_fields(body):
                checks.append(f"static_assert(offsetof(doc_block::{name}, {field}) == offsetof(::{name}, {field}), "
                              f"\"{name}.{field}: offset\");")
        for name in pointers:
            checks.append(f"static_assert(std::is_same_v<doc_block::{name}, ::{name}>, \"{name}: signature\");")
        source = "\n".join(["#include <cstddef>", "#include <cstdint>", "#include <type_traits>",
                            '#include "anvil/runtime/c_abi.h"',
                            "namespace doc_block {", code, "}", *checks, ""])
        self.compile_and_run(source, where, code, run=False)

    def run(self, lang, code, where):
        getattr(self, "run_" + lang)(code, where)


def test_every_block_names_a_known_language():
    found = {}
    for page in PAGES:
        for lang, _, where in blocks_of(page):
            assert lang in LANGUAGES, f"{where}: code block language '{lang}' is not one of {sorted(LANGUAGES)}"
            if lang != "text":
                found[page.name] = found.get(page.name, 0) + 1
    missing = MUST_HAVE_CODE - set(found)
    assert not missing, f"pages that lost all their runnable examples: {sorted(missing)}"


@pytest.mark.parametrize("page", [p for p in PAGES if any(b[0] not in ("text", "") for b in blocks_of(p))],
                         ids=lambda p: p.name)
def test_page_examples_run(page, tmp_path):
    blocks = blocks_of(page)
    runner = Page(tmp_path, sum(lang == "cpp" for lang, _, _ in blocks))
    try:
        for lang, code, where in blocks:
            if lang in LANGUAGES - {"text"}:
                runner.run(lang, code, where)
    finally:
        runner.stop_background()
