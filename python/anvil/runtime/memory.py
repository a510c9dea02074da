# Runtime queries: the kernel thread pool and the per-device allocators.
from .._device import device as _to_device
from .._registry import get_global_func


def num_threads():
    """Return the number of threads in the runtime's kernel thread pool."""
    return get_global_func("runtime.num_threads")()


def allocator_bytes_held(device, kind="pooled"):
    """Return the bytes an allocator holds from the device (in use plus cached).

    Parameters
    ----------
    device : Device or str
    kind : {"pooled", "naive"}
    """
    return get_global_func("runtime.allocator_bytes_held")(_to_device(device), kind)


def release_unused(device, kind="pooled"):
    """Return an allocator's cached, unused blocks to the device (a no-op for "naive")."""
    get_global_func("runtime.allocator_release_unused")(_to_device(device), kind)
