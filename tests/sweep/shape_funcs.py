from .common import Table

T = Table("shape_funcs", seed=2)
