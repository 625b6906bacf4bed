"""A layer tree's walks (``trainable_variables``, the clearing of ``add_loss`` losses at
an outer call) are kept while the tree is unchanged, and a layer called again from
differentiated code goes straight to its compiled call: every change to the tree (a
layer added or popped, a weight added, a ``trainable`` flag flipped, an attribute
given another layer) shows at once, and the gradients of training steps before and
after such changes match finite differences."""

import numpy as np
from fd import numerical_grad

import s2s_ad.tf as tf


def _mlp(rng, sizes=(3, 5, 2)):
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(sizes[1], activation="tanh", input_shape=(sizes[0],)),
            tf.keras.layers.Dense(sizes[2]),
        ]
    )
    model.set_weights([rng.standard_normal(w.shape) * 0.5 for w in model.weights])
    return model


def _names(variables):
    return [v.name for v in variables]


def test_trainable_variables_follow_changes_to_the_tree():
    rng = np.random.default_rng(3)
    model = _mlp(rng)
    first = model.trainable_variables
    assert len(first) == 4 and model.trainable_variables == first
    first.pop()  # the caller's list: the model's is not changed
    assert len(model.trainable_variables) == 4
    model.add(tf.keras.layers.Dense(1))
    assert len(model.trainable_variables) == 6
    model.layers[0].trainable = False
    assert _names(model.trainable_variables) == _names(model.layers[1].weights) + _names(
        model.layers[2].weights
    )
    model.layers[0].trainable = True
    model.pop()
    assert _names(model.trainable_variables) == _names(model.layers[0].weights) + _names(
        model.layers[1].weights
    )
    model.trainable = False
    assert model.trainable_variables == []


class Scaled(tf.keras.layers.Layer):
    """A layer whose weights come and go with its attributes."""

    def build(self, input_shape):
        self.scale = self.add_weight("scale", shape=(input_shape[-1],), initializer="ones")

    def call(self, inputs):
        return inputs * self.scale


class Gated(tf.keras.layers.Layer):
    """A layer that lists its trainable weights itself (one of them only while open)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.open = True

    def build(self, input_shape):
        self.gate = self.add_weight("gate", shape=(), initializer="ones")
        self.bias = self.add_weight("bias", shape=(), initializer="zeros")

    @property
    def trainable_weights(self):
        return [self.gate, self.bias] if self.open else [self.bias]

    def call(self, inputs):
        return inputs * self.gate + self.bias


class Block(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.inner = Scaled()
        self.gated = Gated()

    def call(self, inputs):
        return self.gated(self.inner(inputs))


def test_attributes_and_own_lists_of_sub_layers_show():
    block = Block()
    x = np.ones((2, 3))
    block(x)
    assert len(block.trainable_variables) == 3
    block.gated.__dict__["open"] = False  # no attribute write the tree sees
    assert len(block.trainable_variables) == 2
    block.gated = Scaled()  # no layer of the tree lists its own weights now
    block(x)
    assert len(block.trainable_variables) == 2
    block.inner.extra = tf.Variable(np.ones(3))
    assert len(block.trainable_variables) == 3
    block.inner = Scaled()  # the old one (and its weights) gone, the new one not built
    assert len(block.trainable_variables) == 1


class Noisy(tf.keras.layers.Layer):
    """A layer adding one loss per call (an activity penalty of the user's)."""

    def call(self, inputs):
        self.add_loss(tf.reduce_sum(inputs**2))
        return inputs


def test_losses_are_those_of_the_last_outer_call():
    model = tf.keras.Sequential([Noisy(), tf.keras.layers.Dense(2), Noisy()])
    x = np.array([[1.0, 2.0]])
    model(x)
    model(x)
    assert len(model.losses) == 2
    model(x)
    assert len(model.losses) == 2
    model.add(Noisy())
    model(x)
    assert len(model.losses) == 3


def test_a_layer_added_with_losses_of_its_own_call_has_them_cleared():
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    x = np.array([[1.0, 2.0]])
    noisy = Noisy()
    noisy(np.ones((1, 2)))  # called alone: one loss
    model(x)  # adds none
    model.add(noisy)  # the only change since: the tree's
    assert len(model.losses) == 1
    model(x)
    assert len(model.losses) == 1
    assert np.isclose(model.losses[0], np.sum(np.asarray(model.layers[0](x)) ** 2))


def test_steps_around_tree_changes_match_finite_differences():
    rng = np.random.default_rng(8)
    model = _mlp(rng)
    x = rng.standard_normal((6, 3))
    y = rng.standard_normal((6, 2))
    mse = tf.keras.losses.MeanSquaredError()

    def step():
        with tf.GradientTape() as tape:
            loss = mse(y, model(x, training=True))
        variables = model.trainable_variables
        return tape.gradient(loss, variables), [v.numpy() for v in variables]

    def reference(weights, frozen):
        def loss_of(*trained):
            it = iter(trained)
            h = x
            for k in range(len(model.layers)):
                kernel, bias = frozen[k] if k in frozen else (next(it), next(it))
                h = h @ kernel + bias
                if k == 0:
                    h = np.tanh(h)
            return np.mean((h - y) ** 2)

        return numerical_grad(loss_of, tuple(weights), tuple(range(len(weights))))

    for round_ in range(4):  # compiled, then the layers' calls found again
        if round_ == 2:  # the first layer frozen between steps
            model.layers[0].trainable = False
        grads, weights = step()
        frozen = {}
        if round_ >= 2:
            frozen[0] = tuple(w.numpy() for w in model.layers[0].weights)
        expected = reference(weights, frozen)
        assert len(grads) == len(expected) == (2 if round_ >= 2 else 4)
        for got, want in zip(grads, expected):
            assert np.allclose(got, want, rtol=1e-4, atol=1e-6)
        for v, g in zip(model.trainable_variables, grads):
            v.assign_sub(0.05 * np.asarray(g))
