"""Lists and dicts in a tape's block: a list made in the block and filled by a loop
(``outs.append(...)``, then ``tf.add_n(outs)`` or ``tf.stack(outs)``), tensors watched
through the list or dict that holds them (``tape.watch(xs)``), a custom training loop
over a ``tf.Module`` holding its Variables in a list of dicts, with
``unconnected_gradients=ZERO`` and ``tf.clip_by_global_norm``; and the refusal of a
source computed in a loop of the block that no name holds.

The literals were printed by the same programs run with TensorFlow 2.21; the float64
gradients are also checked against central finite differences.
"""

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad.tf as tf
from s2s_ad.errors import TransformError


def _sum_of_terms(x, combine):
    with tf.GradientTape() as tape:
        outs = []
        for i in range(3):
            outs.append(tf.sin(x) * i)
        total = tf.add_n(outs) if combine == "add_n" else tf.reduce_sum(tf.stack(outs))
    return total, tape


@pytest.mark.parametrize("combine", ["add_n", "stack"])
def test_a_list_filled_by_a_loop_of_the_block(combine):
    x = tf.Variable(1.5, dtype=tf.float64)
    total, tape = _sum_of_terms(x, combine)
    g = tape.gradient(total, x)
    np.testing.assert_allclose(g.numpy(), 0.2122116050031087, rtol=1e-12)  # TensorFlow 2.21
    np.testing.assert_allclose(float(total), 3 * np.sin(1.5), rtol=1e-12)
    want = numerical_grad(lambda v: 3 * np.sin(v), [1.5])
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-6)


def test_a_list_of_values_computed_in_a_loop_from_a_watched_constant():
    x0 = tf.constant(1.5, dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x0)
        z = x0
        outs = []
        for _ in range(3):
            z = tf.sin(z) * x0
            outs.append(z)
        total = tf.add_n(outs)
    g = tape.gradient(total, x0)
    np.testing.assert_allclose(g.numpy(), 3.3471957519149633, rtol=1e-12)  # TensorFlow 2.21

    def plain(v):
        z, acc = v, 0.0
        for _ in range(3):
            z = np.sin(z) * v
            acc = acc + z
        return acc

    np.testing.assert_allclose(g.numpy(), numerical_grad(plain, [1.5]), rtol=1e-6)


def test_a_source_computed_in_a_loop_of_the_block_is_refused():
    x0 = tf.constant(1.5, dtype=tf.float64)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x0)
        z = x0
        outs = []
        for _ in range(3):
            z = tf.sin(z) * x0
            tape.watch(z)
            outs.append(z)
        total = tf.add_n(outs)
    # TensorFlow 2.21 gives 1.1242785649775378 for outs[0]: refused, never a wrong None
    with pytest.raises(TransformError, match="no name holds") as caught:
        tape.gradient(total, outs[0])
    assert "test_tf_tape_containers.py" in str(caught.value)
    np.testing.assert_allclose(tape.gradient(total, x0).numpy(), 3.3471957519149633)


def test_tensors_watched_through_a_list_and_a_dict():
    xs = [tf.constant(1.5, dtype=tf.float64), tf.constant(2.0, dtype=tf.float64)]
    with tf.GradientTape() as tape:
        tape.watch(xs)
        y = xs[0] * xs[1] ** 2
    g = tape.gradient(y, xs)
    assert [float(v) for v in g] == [4.0, 6.0]  # TensorFlow 2.21
    d = {"a": tf.constant(np.array([1.0, 2.0])), "b": tf.constant(3.0, dtype=tf.float64)}
    with tf.GradientTape() as tape:
        tape.watch(d)
        y = tf.reduce_sum(d["a"] ** 2) * d["b"]
    g = tape.gradient(y, d)
    np.testing.assert_allclose(g["a"].numpy(), [6.0, 12.0])  # TensorFlow 2.21
    assert float(g["b"]) == 5.0
    unused = [tf.constant(1.0, dtype=tf.float64)]
    with tf.GradientTape() as tape:
        tape.watch(unused)
        y = xs[0] * 2.0
    assert tape.gradient(y, unused) == [None]  # watched, not read: None as in TensorFlow


class MLP(tf.Module):
    def __init__(self, sizes, name=None):
        super().__init__(name=name)
        self.layers = []
        for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            w = tf.Variable(np.sin(np.arange(a * b) * 0.7 + k).reshape(a, b) * 0.5, name=f"w{k}")
            self.layers.append({"w": w, "b": tf.Variable(np.zeros(b), name=f"b{k}")})

    @tf.function
    def __call__(self, x):
        for i, layer in enumerate(self.layers):
            x = tf.matmul(x, layer["w"]) + layer["b"]
            if i < len(self.layers) - 1:
                x = tf.nn.relu(x)
        return x


def test_a_custom_training_loop_with_clipping_and_zero_unconnected_gradients():
    mlp = MLP([3, 4, 2])
    assert [v.name for v in mlp.trainable_variables] == ["b0:0", "w0:0", "b1:0", "w1:0"]
    x = np.sin(np.arange(15.0)).reshape(5, 3)
    y = np.array([0, 1, 1, 0, 1])
    opt = tf.keras.optimizers.SGD(0.5)
    spare = tf.Variable(np.ones(2))

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = mlp(x)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
            )
            loss = loss + tf.stop_gradient(tf.reduce_sum(mlp.layers[0]["w"] ** 2)) * 0.0
        grads = tape.gradient(
            loss,
            mlp.trainable_variables + (spare,),
            unconnected_gradients=tf.UnconnectedGradients.ZERO,
        )
        clipped, norm = tf.clip_by_global_norm(grads[:-1], 0.5)
        opt.apply_gradients(zip(clipped, mlp.trainable_variables))
        return loss, norm, grads[-1]

    got = []
    for _ in range(3):
        loss, norm, unconnected = train_step(x, y)
        np.testing.assert_array_equal(unconnected.numpy(), [0.0, 0.0])
        got.append((float(loss), float(norm)))
    # TensorFlow 2.21
    np.testing.assert_allclose(
        got,
        [(0.69010715, 0.15518236), (0.67954422, 0.11768772), (0.67340886, 0.09157426)],
        atol=1e-8,
    )
