"""Lists and dicts made before a tape's block and filled inside it (``losses.append(...)``
in a loop over batches, ``hist["b"] = ...``), then summed or given whole as the target:
the re-run fills a copy of the list as it was on entry, so the gradient is the one of
the values the block appended (it was a silent ``None`` before).

The literals were printed by the same programs run with TensorFlow 2.21 (tf_keras); the
float64 gradients are also checked against central finite differences.
"""

import numpy as np
from fd import numerical_grad

import s2s_ad.tf as tf
from s2s_ad.tf import keras


def _sines(v, outs):
    with tf.GradientTape(persistent=True) as tape:
        for i in range(3):
            outs.append(tf.sin(v) * (i + 1))
        total = tf.add_n(outs)
    return tape, total


def test_a_list_made_before_the_block_and_appended_to_in_a_loop():
    x = tf.Variable(1.5, dtype=tf.float64)
    outs = [tf.constant(2.0, dtype=tf.float64)]
    tape, total = _sines(x, outs)
    np.testing.assert_allclose(float(total), 7.9849699196243265, rtol=1e-12)  # TensorFlow
    want = numerical_grad(lambda v: 2.0 + 6.0 * np.sin(v), [1.5])
    for _ in range(2):  # a persistent tape: each re-run fills its own copy
        g = tape.gradient(total, x)
        np.testing.assert_allclose(g.numpy(), 0.4244232100062174, rtol=1e-12)  # TensorFlow
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-6)
    # the list itself as the target: the gradient of the sum of its tensors
    np.testing.assert_allclose(tape.gradient(outs, x).numpy(), 0.4244232100062174, rtol=1e-12)
    assert len(outs) == 4  # the re-runs left the user's list as the block left it


def test_a_list_read_back_while_it_is_filled_and_a_dict_given_new_keys():
    x = tf.Variable(1.5, dtype=tf.float64)
    acc = [x * 1.0]
    with tf.GradientTape() as tape:
        acc.append(x**2)
        acc.append(acc[-1] * x)
        s = tf.reduce_sum(tf.stack(acc))
    np.testing.assert_allclose(tape.gradient(s, x).numpy(), 9.75, rtol=1e-12)  # TensorFlow
    assert len(acc) == 3
    d = {"a": x * 2.0}
    with tf.GradientTape() as tape:
        d["b"] = x**3
        t = d["a"] + d["b"]
    np.testing.assert_allclose(tape.gradient(t, x).numpy(), 6.75, rtol=1e-12)  # TensorFlow
    v = tf.Variable([1.0, 2.0])
    hist = {"a": tf.constant(1.0)}
    with tf.GradientTape() as tape:
        hist["b"] = tf.reduce_sum(v**2)
        hist["c"] = hist["b"] * 3.0
    np.testing.assert_allclose(tape.gradient(hist, v).numpy(), [8.0, 16.0])  # TensorFlow


def test_batch_losses_collected_in_a_list_from_before_the_block():
    model = keras.Sequential([keras.layers.Dense(3, activation="tanh"), keras.layers.Dense(1)])
    model.build((None, 2))
    model.set_weights(
        [
            np.sin(np.arange(6.0)).reshape(2, 3).astype(np.float32),
            np.cos(np.arange(3.0)).astype(np.float32) * 0.1,
            np.sin(np.arange(3.0) + 1).reshape(3, 1).astype(np.float32),
            np.array([0.2], np.float32),
        ]
    )
    xs = [
        np.array([[0.5, -1.0], [0.2, 0.3]], np.float32),
        np.array([[1.0, 0.4], [-0.7, 0.1]], np.float32),
    ]
    ys = [np.array([[1.0], [0.0]], np.float32), np.array([[0.5], [-0.5]], np.float32)]
    losses = []
    with tf.GradientTape() as tape:
        for x, y in zip(xs, ys):
            losses.append(tf.reduce_mean(tf.square(model(x) - y)))
        total = tf.add_n(losses) / len(losses)
    grads = tape.gradient(total, model.trainable_variables)
    # TensorFlow 2.21
    np.testing.assert_allclose(float(total), 0.06895329058170319, rtol=1e-6)
    expected = [
        [0.1303964, 0.1068135, 0.0198077, 0.0835269, 0.0886587, 0.0145498],
        [0.3865538, 0.3309432, 0.0509848],
        [0.0607978, 0.0665222, 0.0202317],
        [0.4682598],
    ]
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(g.numpy().ravel(), e, rtol=1e-5, atol=1e-7)
    assert len(losses) == 2
