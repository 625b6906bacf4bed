"""The autograd sweep: NumPy and SciPy functions as users call them (see
``tests/test_autograd_sweep.py``)."""
