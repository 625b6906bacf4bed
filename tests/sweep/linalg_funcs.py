from .common import Table

T = Table("linalg_funcs", seed=2)
