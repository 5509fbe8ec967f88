"""Native kernels for mdf over Apache Arrow.

Every function takes a ``pyarrow.Array`` or ``pyarrow.ChunkedArray`` (or any object exposing
``__arrow_c_array__``) and returns one contiguous ``pyarrow.Array`` without copying the input.
Heavy calls release the GIL and run on a pool of ``MDF_NUM_THREADS`` threads (default: all
cores; the variable is read at the first parallel call; with one, on the calling thread, with the
exception ``_native.pyi`` names). See ``_native.pyi`` for the contract of each function.
"""

from mdf_kernels._native import *  # noqa: F403
from mdf_kernels._native import __all__ as __all__

# The names are written twice, not four times: lib.rs registers them (PyO3 keeps the module's __all__) and
# _native.pyi types them; stubtest (nox session kernels) checks that the two agree, and this re-exports them.
