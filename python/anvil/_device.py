# Device constructors with TVM's names: anvil.cpu(0), anvil.cuda(1), anvil.device("vulkan:0").
from ._ffi import Device, device_type_codes

# DLPack device type codes, from runtime/device_types.def.
_CPU, _CUDA, _OPENCL, _VULKAN = (device_type_codes()[name] for name in ("cpu", "cuda", "opencl", "vulkan"))


def cpu(dev_id=0):
    """Return the CPU device `dev_id`."""
    return Device(_CPU, dev_id)


def cuda(dev_id=0):
    """Return the CUDA GPU `dev_id`."""
    return Device(_CUDA, dev_id)


def opencl(dev_id=0):
    """Return the OpenCL device `dev_id`."""
    return Device(_OPENCL, dev_id)


cl = opencl


def vulkan(dev_id=0):
    """Return the Vulkan device `dev_id`."""
    return Device(_VULKAN, dev_id)


def device(dev_type, dev_id=None):
    """Build a Device from a flexible description.

    Parameters
    ----------
    dev_type : str, int, tuple or Device
        ``"cpu"``, ``"cuda:1"``, a DLPack device code, ``("cpu", 0)`` or a Device.
    dev_id : int, optional
        The device ordinal; defaults to 0 or to the index given in `dev_type`.

    Returns
    -------
    Device

    Raises
    ------
    ValueError
        For an unknown device name or conflicting indices.
    """
    if isinstance(dev_type, Device):
        if dev_id is not None and dev_id != dev_type.device_id:
            raise ValueError(f"device: {dev_type!r} conflicts with dev_id={dev_id}")
        return dev_type
    if isinstance(dev_type, tuple):
        if len(dev_type) != 2 or dev_id is not None:
            raise ValueError(f"device: expected (type, id), got {dev_type!r}")
        dev_type, dev_id = dev_type
    if isinstance(dev_type, str) and ":" in dev_type:
        name, _, index = dev_type.partition(":")
        if not index.isdigit():
            raise ValueError(f"device: cannot parse {dev_type!r}: expected 'name:index', e.g. 'cuda:0'")
        if dev_id is not None and dev_id != int(index):
            raise ValueError(f"device: {dev_type!r} conflicts with dev_id={dev_id}")
        dev_type, dev_id = name, int(index)
    return Device(dev_type, 0 if dev_id is None else dev_id)
