from .common import Table

T = Table("scipy_funcs", seed=2)
