"""``tf.keras``: the layers, losses and optimizers the seed documents use."""

from . import activations, layers, losses, optimizers

__all__ = ["activations", "layers", "losses", "optimizers"]
