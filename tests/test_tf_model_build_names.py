"""The names of the Variables of a subclassed ``keras.Model`` with a ``build`` of its own,
and a layer built twice (its ``build`` called by hand, then by its first call).

The expected names were printed by the same programs under TensorFlow 2.21 and tf_keras
(``TF_USE_LEGACY_KERAS=1``): a model whose ``build`` ends with ``super().build(shape)``
builds its sub-layers as Keras 2 does, in a graph of its own (their Variables are not
under the model's name, layers made there are numbered afresh); a ``build`` that runs
twice keeps only the weights of the second run.
"""

import re

import numpy as np

import s2s_ad.tf as tf
from s2s_ad.tf import keras

layers = keras.layers


class Block(layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(input_shape[-1], self.units))
        self.inner = layers.Dense(2)

    def call(self, x):
        return self.inner(x @ self.w)


class Scaled(keras.Model):
    def __init__(self):
        super().__init__(name="scaled")
        self.block = Block(3, name="block")
        self.head = layers.Dense(1, name="head")

    def build(self, input_shape):
        self.scale = self.add_weight(name="scale", shape=(1,), initializer="ones")
        self.block.build(input_shape)
        super().build(input_shape)

    def call(self, x):
        return self.head(self.block(x)) * self.scale


class Lazy(Scaled):
    def build(self, input_shape):
        self.scale = self.add_weight(name="scale", shape=(1,), initializer="ones")
        self.block.build(input_shape)


def _trains(model, x):
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(model(x))
    grads = tape.gradient(y, model.trainable_variables)
    assert all(
        g is not None and g.shape == v.shape for g, v in zip(grads, model.trainable_variables)
    )


def test_a_model_whose_build_calls_super_build_names_its_layers_as_keras():
    model = Scaled()
    x = np.ones((2, 4), np.float32)
    model(x)
    assert [v.name for v in model.variables] == [
        "block/w:0",
        "block/dense/kernel:0",
        "block/dense/bias:0",
        "head/kernel:0",
        "head/bias:0",
        "scaled/scale:0",
    ]
    assert model.block.inner.name == "dense"
    _trains(model, x)


def test_a_model_whose_build_only_builds_a_block_by_hand():
    model = Lazy()
    x = np.ones((2, 4), np.float32)
    model(x)
    names = [v.name for v in model.variables]
    assert len(names) == 6  # the block's first weight (built by hand) is replaced
    assert names[0] == "scaled/block/w:0"
    assert re.fullmatch(r"scaled/block/dense_\d+/kernel:0", names[1])
    assert names[3:] == ["scaled/head/kernel:0", "scaled/head/bias:0", "scaled/scale:0"]
    _trains(model, x)


def test_a_layer_built_by_hand_then_called_keeps_the_second_weights():
    block = Block(3, name="bb")
    block.build((None, 4))
    assert not block.built
    assert [v.name for v in block.weights[:1]] == ["w:0"]
    first = block.w
    block(np.ones((2, 4), np.float32))
    assert block.built
    names = [v.name for v in block.weights]
    assert names[0] == "bb/w:0" and len(names) == 3  # w, then the inner layer's kernel, bias
    assert all(v is not first for v in block.weights)
