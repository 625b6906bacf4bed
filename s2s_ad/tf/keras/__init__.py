"""``tf.keras`` (also ``from s2s_ad.tf import keras``): layers, models, losses, metrics,
optimizers, activations and initializers backed by NumPy."""

from . import (
    activations,
    callbacks,
    initializers,
    layers,
    losses,
    metrics,
    models,
    optimizers,
    regularizers,
    utils,
)
from .base import Input
from .models import Model, Sequential

__all__ = [
    "Input",
    "Model",
    "Sequential",
    "activations",
    "callbacks",
    "initializers",
    "layers",
    "losses",
    "metrics",
    "models",
    "optimizers",
    "regularizers",
    "utils",
]
