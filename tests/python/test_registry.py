# The global function registry from Python: registering callables, calling them through C++,
# override rules, listing by prefix, and Python exceptions crossing C++ unchanged.
import threading

import numpy as np
import pytest

import anvil


@pytest.fixture
def name(request):
    """A registry name unique to the test, removed afterwards."""
    n = f"pytest.{request.node.name}"
    yield n
    anvil.remove_global_func(n)


def test_register_and_call_through_cpp(name):
    calls = []

    def add(a, b):
        calls.append((a, b))
        return a + b

    assert anvil.register_func(name, add) is add
    f = anvil.get_global_func(name)
    assert isinstance(f, anvil.Function)
    assert f(2, 40) == 42
    assert f(1.5, 2) == 3.5
    assert f("ab", "cd") == "abcd"
    assert calls == [(2, 40), (1.5, 2), ("ab", "cd")]


def test_decorator_forms(name):
    @anvil.register_func(name)
    def twice(x):
        return 2 * x

    assert twice(4) == 8  # the decorator returns the function itself
    assert anvil.get_global_func(name)(21) == 42

    @anvil.register_func
    def pytest_bare_decorator_name(x):
        return x + 1

    try:
        assert anvil.get_global_func("pytest_bare_decorator_name")(1) == 2
    finally:
        anvil.remove_global_func("pytest_bare_decorator_name")


def test_override_rules(name):
    anvil.register_func(name, lambda: 1)
    with pytest.raises(ValueError, match=name):
        anvil.register_func(name, lambda: 2)
    assert anvil.get_global_func(name)() == 1
    anvil.register_func(name, lambda: 3, override=True)
    assert anvil.get_global_func(name)() == 3


def test_missing_function(name):
    with pytest.raises(ValueError, match=name):
        anvil.get_global_func(name)
    assert anvil.get_global_func(name, allow_missing=True) is None
    assert anvil.remove_global_func(name) is False


def test_list_by_prefix(name):
    anvil.register_func(name + ".b", lambda: None)
    anvil.register_func(name + ".a", lambda: None)
    try:
        assert anvil.list_global_func_names(name + ".") == [name + ".a", name + ".b"]
        assert "testing.echo" in anvil.list_global_func_names("testing.")
        assert all(n.startswith("runtime.") for n in anvil.list_global_func_names("runtime."))
        assert len(anvil.list_global_func_names()) >= len(anvil.list_global_func_names("runtime."))
    finally:
        anvil.remove_global_func(name + ".a")
        anvil.remove_global_func(name + ".b")


def test_registering_a_cpp_function_under_a_new_name(name):
    anvil.register_func(name, anvil.get_global_func("testing.echo"))
    assert anvil.get_global_func(name)("x") == "x"


class CustomError(Exception):
    pass


@pytest.mark.parametrize("exc_type", [ValueError, TypeError, IndexError, KeyError, NotImplementedError,
                                      OSError, RuntimeError, ZeroDivisionError, CustomError,
                                      anvil.InternalError])
def test_python_exception_surfaces_as_the_same_exception(name, exc_type):
    raised = exc_type("boom from python")

    def fail(x):
        raise raised

    anvil.register_func(name, fail)
    with pytest.raises(exc_type) as info:
        anvil.get_global_func(name)(1)
    assert info.value is raised


def test_exception_crosses_nested_boundaries(name):
    # Python -> C++ (outer) -> Python -> C++ (inner) -> Python raising.
    def inner():
        raise IndexError("deep")

    anvil.register_func(name + ".inner", inner)
    try:
        def outer():
            return anvil.get_global_func(name + ".inner")()

        anvil.register_func(name, outer)
        with pytest.raises(IndexError, match="deep"):
            anvil.get_global_func(name)()
    finally:
        anvil.remove_global_func(name + ".inner")


def test_python_callable_passed_as_argument_comes_back_callable():
    echo = anvil.get_global_func("testing.echo")
    f = echo(lambda a, b: a * b)
    assert isinstance(f, anvil.Function)
    assert f(6, 7) == 42


def test_unconvertible_return_value_is_type_error(name):
    anvil.register_func(name, lambda: {"a": 1})
    with pytest.raises(TypeError, match="dict"):
        anvil.get_global_func(name)()


def test_registered_function_receives_tensors_without_copy(name, make_random):
    seen = []

    def record(t):
        seen.append(t.data_ptr)
        return t

    anvil.register_func(name, record)
    arr = make_random((4,), "float32")
    out = anvil.get_global_func(name)(arr)  # the numpy array travels as a Tensor over its memory
    assert seen == [arr.__array_interface__["data"][0]]
    assert out.data_ptr == seen[0]
    np.testing.assert_array_equal(out.numpy(), arr)


def test_calls_from_several_python_threads(name):
    anvil.register_func(name, lambda x: x + 1)
    f = anvil.get_global_func(name)
    results = [None] * 8

    def work(i):
        results[i] = sum(f(j) for j in range(200))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [sum(range(1, 201))] * 8
