"""``t.jacobian`` and ``t.batch_jacobian`` of an inner tape in a helper that an outer
tape's block calls: a Jacobian-norm regularizer of a float64 layer, the summed input
Jacobian of a Keras critic, and the per-example Jacobian of its first layer.

The literals were printed by the same programs run with TensorFlow 2.21 and tf_keras
(``TF_USE_LEGACY_KERAS=1``), with the same weights and data; the float64 program is
also checked against central finite differences.
"""

import numpy as np
import pytest
from fd import numerical_grad
from tf_weights import leaky_critic as _critic
from tf_weights import sin_weights as _w

import s2s_ad.tf as tf
from s2s_ad.errors import TransformError
from s2s_ad.tf import keras

layers = keras.layers


class TanhLayer(tf.Module):
    def __init__(self, w):
        super().__init__()
        self.w = tf.Variable(w)

    def __call__(self, x):
        return tf.tanh(tf.matmul(x, self.w))


def jacobian_norm(layer, x):
    """The squared Frobenius norm of the layer's Jacobian at ``x``."""
    with tf.GradientTape() as t:
        t.watch(x)
        y = layer(x)
    return tf.reduce_sum(t.jacobian(y, x) ** 2)


def per_example_norm(layer, x):
    with tf.GradientTape() as t:
        t.watch(x)
        y = layer(x)
    j = t.batch_jacobian(y, x)
    return tf.reduce_sum(j**2), j


X0 = np.array([[0.5, -1.0, 2.0], [1.0, 0.3, -0.2]])
W0 = np.array([[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]])
# TensorFlow 2.21: the loss and its gradients with respect to x0 and the layer's w
TF_LOSS = 1.0359160368946516
TF_DX = [
    [-0.03819712995521568, -0.08184690166556036, -0.17788785449604372],
    [0.005488813087991868, -0.0727997716126812, -0.008262418910703381],
]
TF_DW = [
    [-0.013912129780638438, 0.47786733979400076],
    [1.0833090038962094, -0.750422394571691],
    [0.731630825214453, 1.131577900476657],
]


@pytest.mark.parametrize("helper", ["jacobian", "batch_jacobian"])
def test_a_jacobian_regularizer_in_a_helper_matches_tensorflow(helper):
    layer = TanhLayer(W0.copy())
    x0 = tf.Variable(X0.copy())

    def objective():
        x = x0 * 1.0
        if helper == "jacobian":
            return jacobian_norm(layer, x)
        return per_example_norm(layer, x)[0]

    with tf.GradientTape() as tape:
        loss = objective()
    dx, dw = tape.gradient(loss, [x0, layer.w])
    # the rows of different examples do not interact: both norms are the same number
    np.testing.assert_allclose(float(loss), TF_LOSS, rtol=1e-12)
    np.testing.assert_allclose(dx.numpy(), TF_DX, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(dw.numpy(), TF_DW, rtol=1e-10, atol=1e-14)
    for variable, got in ((x0, dx), (layer.w, dw)):
        start = variable.numpy()

        def at(value, variable=variable):
            variable.assign(value)
            return float(objective())

        want = numerical_grad(at, [start])
        variable.assign(start)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-8)


def _summed_input_jacobian(critic, x):
    with tf.GradientTape() as t:
        t.watch(x)
        score = critic(x)
    return tf.reduce_sum(t.jacobian(score, x))


def test_the_summed_input_jacobian_of_a_keras_critic():
    critic = _critic()
    x = tf.constant(_w((4, 3), 1.0))
    with tf.GradientTape() as tape:
        total = _summed_input_jacobian(critic, x)
    grads = tape.gradient(total, critic.trainable_variables)
    # TensorFlow 2.21 (float32)
    np.testing.assert_allclose(float(total), -0.4790329337120056, rtol=1e-6)
    np.testing.assert_allclose(
        grads[1].numpy(),
        [0.068552, 0.120048, -0.162974, -0.074234, 0.419393, -0.138427, -0.057766, 0.193926],
        rtol=1e-5,
        atol=1e-6,
    )
    np.testing.assert_allclose(
        grads[4].numpy().ravel(),
        [0.488016, 0.940942, -0.292293, -0.765109, -0.179018, 0.610894],
        rtol=1e-5,
        atol=1e-6,
    )
    np.testing.assert_allclose(
        grads[0].numpy()[0, :4], [-0.836823, 1.733145, -0.371324, -0.945992], rtol=1e-5
    )
    assert not np.any(grads[5].numpy())  # TensorFlow: None (the documented zeros)


def _first_layer_jacobian(critic, x):
    with tf.GradientTape() as t:
        t.watch(x)
        h = critic.layers[0](x)
    j = t.batch_jacobian(h, x)
    return tf.reduce_mean(j**2), j


def test_the_batch_jacobian_of_a_critics_first_layer():
    critic = _critic()
    x = tf.constant(_w((4, 3), 1.0))
    with tf.GradientTape() as tape:
        penalty, j = _first_layer_jacobian(critic, x)
    grads = tape.gradient(penalty, critic.trainable_variables)
    # TensorFlow 2.21: the Jacobian is the kernel's transpose for every example
    assert j.shape == (4, 8, 3)
    np.testing.assert_allclose(j.numpy()[1], critic.layers[0].kernel.numpy().T)
    np.testing.assert_allclose(float(penalty), 0.18558575212955475, rtol=1e-6)
    np.testing.assert_allclose(
        grads[0].numpy()[0, :4], [0.045647, 0.029098, -0.03404, -0.042677], rtol=1e-4
    )
    np.testing.assert_allclose(grads[0].numpy(), critic.layers[0].kernel.numpy() / 12, rtol=1e-6)
    assert not np.any(grads[1].numpy())  # TensorFlow: None (the documented zeros)


def _variables_jacobian(critic, x):
    with tf.GradientTape() as t:
        score = critic(x)
    return tf.reduce_sum(t.jacobian(score, critic.trainable_variables[0]))


def test_a_jacobian_with_respect_to_a_models_variables_in_a_helper_is_refused():
    critic = _critic()
    x = tf.constant(_w((4, 3), 1.0))
    with tf.GradientTape() as tape:
        total = _variables_jacobian(critic, x)
    with pytest.raises(TransformError, match="jacobian") as caught:
        tape.gradient(total, critic.trainable_variables)
    assert "test_tf_inner_tape_jacobians.py" in str(caught.value)
    assert "t.jacobian(score, critic.trainable_variables[0])" in str(caught.value)
