# Model parameters: named tensors saved to bytes, loaded back, or packed as a "params" module.
from .. import _ffi


def save_params(params):
    """Serialise named tensors to bytes (the ANVLPARM format).

    Parameters
    ----------
    params : dict of str to Tensor or numpy array

    Returns
    -------
    bytes
    """
    return _ffi.save_params(params)


def load_params(data):
    """Read bytes written by save_params.

    Parameters
    ----------
    data : bytes

    Returns
    -------
    dict of str to Tensor
        CPU tensors.

    Raises
    ------
    ValueError
        When the data is corrupt (the message names the field and offset).
    """
    return _ffi.load_params(bytes(data))


def params_module(params):
    """Pack named tensors as a module of kind ``"params"``.

    Its functions are ``get_param(name)``, ``list_params()`` and ``num_params()``; import it into a
    C source module and export_library carries it inside the shared library.

    Parameters
    ----------
    params : dict of str to Tensor or numpy array

    Returns
    -------
    Module
    """
    return _ffi.params_module(params)
