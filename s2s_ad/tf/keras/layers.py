"""Keras layers: ``Dense``, ``Dropout``, ``BatchNormalization``, ``Flatten``,
``Activation``, ``ReLU``, ``LeakyReLU`` (NumPy code the transformer differentiates)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...custom import stop_gradient
from .. import nn
from . import activations, initializers, regularizers
from .base import Input, InputLayer, KerasTensor, Layer

__all__ = [
    "Activation",
    "BatchNormalization",
    "Dense",
    "Dropout",
    "Flatten",
    "Input",
    "InputLayer",
    "KerasTensor",
    "Layer",
    "LeakyReLU",
    "ReLU",
]


class Dense(Layer):
    """``activation(inputs @ kernel + bias)``; the weights are made on the first call.

    Args:
        units: The size of the output's last axis.
        activation: A name (``'relu'``), a callable or ``None``.
        use_bias: Whether to add a bias.
        kernel_initializer: A name or initializer for the kernel (Glorot uniform).
        bias_initializer: A name or initializer for the bias (zeros).
    """

    def __init__(
        self,
        units: int,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        activity_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel: Any = None
        self.bias: Any = None

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "activation": activations.serialize(self.activation)
                if self.activation is not None
                else "linear",
                "use_bias": self.use_bias,
                "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer,
                "kernel_regularizer": self.kernel_regularizer,
                "bias_regularizer": self.bias_regularizer,
                "activity_regularizer": self.activity_regularizer,
            }
        )
        return config

    def build(self, input_shape: Any) -> None:
        n_in = int(input_shape[-1])
        self.kernel = self.add_weight(
            "kernel",
            (n_in, self.units),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
        )
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                (self.units,),
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
            )
        self.built = True

    def call(self, inputs: Any) -> Any:
        y = inputs @ self.kernel
        if self.use_bias:
            y = y + self.bias
        activation = self.activation
        if activation is activations.tanh:  # its body, inline: differentiated code then
            y = np.tanh(y)  # calls no activation through the run-time dispatcher
        elif activation is activations.relu:  # (with its default arguments, as Dense calls it)
            y = np.maximum(y, 0.0)
        elif activation is not None:
            y = activation(y)
        return y


class Activation(Layer):
    """An activation function as a layer."""

    def __init__(self, activation: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs: Any) -> Any:
        return self.activation(inputs)


class ReLU(Layer):
    """``max(x, 0)``, or with ``negative_slope``, ``max_value`` and ``threshold``, as
    ``keras.activations.relu``."""

    def __init__(
        self,
        max_value: Any = None,
        negative_slope: float = 0.0,
        threshold: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.max_value = max_value
        self.negative_slope = float(negative_slope)
        self.threshold = float(threshold)

    def call(self, inputs: Any) -> Any:
        return activations.relu(
            inputs, alpha=self.negative_slope, max_value=self.max_value, threshold=self.threshold
        )


class LeakyReLU(Layer):
    """``x`` where positive, ``alpha * x`` elsewhere (Keras 2's default ``alpha`` is
    0.3; Keras 3 names it ``negative_slope``)."""

    def __init__(self, alpha: float = 0.3, **kwargs: Any) -> None:
        slope = kwargs.pop("negative_slope", None)
        super().__init__(**kwargs)
        self.alpha = float(alpha if slope is None else slope)

    def call(self, inputs: Any) -> Any:
        return np.where(inputs > 0, inputs, self.alpha * inputs)


class Flatten(Layer):
    """Reshape to ``(batch, -1)``."""

    def call(self, inputs: Any) -> Any:
        return np.reshape(inputs, (np.shape(inputs)[0], -1))


class Dropout(Layer):
    """In training (``training=True``), zero each entry with probability ``rate`` and
    scale the others by ``1 / (1 - rate)``; otherwise the identity."""

    def __init__(self, rate: float, noise_shape: Any = None, seed: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.rate = float(rate)
        self.noise_shape = noise_shape

    def call(self, inputs: Any, training: Any = None) -> Any:
        if training and self.rate > 0.0:
            return nn.dropout(inputs, self.rate, self.noise_shape)
        return inputs


class BatchNormalization(Layer):
    """Normalize over the batch in training (and update the moving statistics:
    ``moving = moving * momentum + batch * (1 - momentum)``), with the moving
    statistics otherwise; then scale by ``gamma`` and shift by ``beta``.

    ``axis`` names the feature axis (or axes, as a list): the statistics are taken over
    all the others, and ``gamma``, ``beta`` and the moving statistics have the shape of
    the input along it (``axis=1`` for channels-first images: one per channel).
    """

    def __init__(
        self,
        axis: Any = -1,
        momentum: float = 0.99,
        epsilon: float = 0.001,
        center: bool = True,
        scale: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.center, self.scale = center, scale
        self.gamma: Any = None
        self.beta: Any = None
        self.moving_mean: Any = None
        self.moving_variance: Any = None
        self._features: tuple[int, ...] = ()  # the feature axes, non-negative
        self._reduced: tuple[int, ...] = ()  # the axes the statistics are taken over
        self._broadcast: tuple[int, ...] = ()  # the parameters' shape against inputs

    def build(self, input_shape: Any) -> None:
        ndim = len(input_shape)
        given = self.axis if isinstance(self.axis, list) else [self.axis]
        features = sorted({int(a) % ndim if -ndim <= int(a) < ndim else ndim for a in given})
        if not features or features[-1] >= ndim:
            raise ValueError(f"BatchNormalization: axis {self.axis} out of range for rank {ndim}")
        self._features = tuple(features)
        self._reduced = tuple(a for a in range(ndim) if a not in features)
        self._broadcast = tuple(int(input_shape[a]) if a in features else 1 for a in range(ndim))
        size = tuple(int(input_shape[a]) for a in features)
        if self.scale:
            self.gamma = self.add_weight("gamma", size, initializer="ones")
        if self.center:
            self.beta = self.add_weight("beta", size, initializer="zeros")
        self.moving_mean = self.add_weight(
            "moving_mean", size, initializer="zeros", trainable=False
        )
        self.moving_variance = self.add_weight(
            "moving_variance", size, initializer="ones", trainable=False
        )
        self.built = True

    def call(self, inputs: Any, training: Any = None) -> Any:
        if np.ndim(inputs) != len(self._broadcast):
            raise ValueError(
                f"BatchNormalization built for rank {len(self._broadcast)}, "
                f"called on rank {np.ndim(inputs)}"
            )
        shape = self._broadcast
        if training and self.trainable:  # a frozen layer normalizes as in inference (Keras 2)
            mean = np.mean(inputs, axis=self._reduced, keepdims=True)
            variance = np.mean(np.square(inputs - mean), axis=self._reduced, keepdims=True)
            keep = self.momentum
            # the moving statistics carry no gradient (Variable.assign cuts it)
            batch_mean = stop_gradient(np.reshape(mean, self.moving_mean.shape))
            batch_variance = stop_gradient(np.reshape(variance, self.moving_variance.shape))
            self.moving_mean.assign(self.moving_mean * keep + batch_mean * (1.0 - keep))
            self.moving_variance.assign(self.moving_variance * keep + batch_variance * (1.0 - keep))
        else:
            mean = np.reshape(self.moving_mean, shape)
            variance = np.reshape(self.moving_variance, shape)
        y = (inputs - mean) / np.sqrt(variance + self.epsilon)
        if self.scale:
            y = y * np.reshape(self.gamma, shape)
        if self.center:
            y = y + np.reshape(self.beta, shape)
        return y
