"""The Keras training step (``tape.gradient(loss, model.trainable_variables)``: every
source a Variable the block reached through its objects) is answered after its first
time without the general bookkeeping (``tape_fast.fast_variables``); whatever would make
the general way answer otherwise takes the general way: a source with a name in the
block, a Variable not read or not watched, a Variable changed after the block (its
gradient is at the weights the block read), a
repeated source, another target, a gradient taken inside another tape's block."""

import numpy as np
import pytest

import s2s_ad.tf as tf
from s2s_ad import tape_fast


def _mlp(seed: int = 3) -> tuple[tf.keras.Sequential, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(5, activation="tanh", input_shape=(4,)),
            tf.keras.layers.Dense(2),
        ]
    )
    weights = [
        rng.standard_normal((4, 5)) * 0.5,
        rng.standard_normal(5) * 0.1,
        rng.standard_normal((5, 2)) * 0.5,
        rng.standard_normal(2) * 0.1,
    ]
    model.set_weights([w.astype(np.float32) for w in weights])
    x = rng.standard_normal((7, 4)).astype(np.float32)
    y = rng.standard_normal((7, 2)).astype(np.float32)
    return model, x, y


def _loss(params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> float:
    """The model's mean squared error in float64, written out with NumPy."""
    w1, b1, w2, b2 = (np.asarray(p, np.float64) for p in params)
    h = np.tanh(x @ w1 + b1)
    return float(np.mean((h @ w2 + b2 - y) ** 2))


def _expected(model: tf.keras.Sequential, x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """Central differences of :func:`_loss` at the model's weights."""
    params = [np.asarray(w, np.float64) for w in model.get_weights()]
    out = []
    for k, p in enumerate(params):
        g = np.zeros_like(p)
        for i in np.ndindex(p.shape):
            step = 1e-6 * max(1.0, abs(p[i]))
            up = [q.copy() for q in params]
            down = [q.copy() for q in params]
            up[k][i] += step
            down[k][i] -= step
            g[i] = (_loss(up, x, y) - _loss(down, x, y)) / (2 * step)
        out.append(g)
    return out


def _remembered(tape: tf.GradientTape) -> bool:
    return id(tape._block) in tape_fast._VARIABLE_REQUESTS


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each request of the test took the short path (appended per request)."""
    taken: list[bool] = []
    original = tape_fast.fast_variables

    def spy(*args: object) -> object:
        got = original(*args)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(tape_fast, "fast_variables", spy)
    return taken


def test_a_keras_training_loop_takes_the_short_path_and_matches_finite_differences():
    model, x, y = _mlp()
    mse = tf.keras.losses.MeanSquaredError()
    opt = tf.keras.optimizers.SGD(learning_rate=0.1)
    for step in range(4):
        with tf.GradientTape() as tape:
            loss = mse(y, model(x, training=True))
        assert _remembered(tape) == (step > 0)
        expected = _expected(model, x, y)
        grads = tape.gradient(loss, model.trainable_variables)
        assert isinstance(grads, list) and len(grads) == 4
        for g, e, v in zip(grads, expected, model.trainable_variables):
            assert g.dtype == np.float32 and g.shape == v.shape
            np.testing.assert_allclose(g, e, rtol=2e-3, atol=1e-5)
        opt.apply_gradients(zip(grads, model.trainable_variables))


def test_sources_in_another_order_a_tuple_and_a_repeated_source(monkeypatch):
    model, x, y = _mlp(5)
    short = _spy(monkeypatch)
    mse = tf.keras.losses.MeanSquaredError()
    expected = _expected(model, x, y)
    variables = model.trainable_variables
    for sources, order in [
        (variables, [0, 1, 2, 3]),
        (variables[::-1], [3, 2, 1, 0]),
        (tuple(variables), [0, 1, 2, 3]),
        ([variables[2], variables[2], variables[0], variables[1]], [2, 2, 0, 1]),
    ]:
        with tf.GradientTape() as tape:
            loss = mse(y, model(x, training=True))
        grads = tape.gradient(loss, sources)
        assert type(grads) is type(sources)
        for g, k in zip(grads, order):
            np.testing.assert_allclose(g, expected[k], rtol=2e-3, atol=1e-5)
    assert short == [False, True, True, False]  # a repeated source: the general way


def test_a_source_named_in_the_block_and_one_the_block_did_not_read(monkeypatch):
    model, x, y = _mlp(7)
    spare = tf.Variable(np.ones(3, np.float32))
    mse = tf.keras.losses.MeanSquaredError()
    expected = _expected(model, x, y)
    short = _spy(monkeypatch)
    for step in range(5):
        # in step 2 the first kernel has a name in the block: a parameter there
        extra = model.layers[0].kernel if step == 2 else spare
        with tf.GradientTape() as tape:
            loss = mse(y, model(x, training=True)) + 0.0 * tf.reduce_sum(extra)
        sources = model.trainable_variables + ([spare] if step == 3 else [])
        if step == 4:  # a Variable the block did not read
            sources.append(tf.Variable(np.zeros(2, np.float32)))
        grads = tape.gradient(loss, sources)
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g, e, rtol=2e-3, atol=1e-5)
        if step == 3:  # read by name (extra): a parameter, its gradient zero
            np.testing.assert_array_equal(grads[4], np.zeros(3, np.float32))
        if step == 4:
            assert len(grads) == 5 and grads[4] is None
    assert short == [False, True, False, False, False]


def test_unwatched_variables_after_a_remembered_step(monkeypatch):
    model, x, y = _mlp(9)
    short = _spy(monkeypatch)
    mse = tf.keras.losses.MeanSquaredError()
    expected = _expected(model, x, y)
    for watch_all in (True, True, False):
        with tf.GradientTape(watch_accessed_variables=watch_all) as tape:
            if not watch_all:
                tape.watch(model.layers[1].kernel)
            loss = mse(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        if watch_all:
            for g, e in zip(grads, expected):
                np.testing.assert_allclose(g, e, rtol=2e-3, atol=1e-5)
        else:
            assert grads[0] is None and grads[1] is None and grads[3] is None
            np.testing.assert_allclose(grads[2], expected[2], rtol=2e-3, atol=1e-5)
    assert short == [False, True, False]


def test_a_variable_changed_between_the_block_and_the_gradient_takes_the_general_way(
    monkeypatch,
):
    model, x, y = _mlp(11)
    short = _spy(monkeypatch)
    mse = tf.keras.losses.MeanSquaredError()
    for step in range(3):
        expected = _expected(model, x, y)  # at the weights the block reads
        with tf.GradientTape() as tape:
            loss = mse(y, model(x, training=True))
        if step == 2:
            kernel = model.layers[0].kernel
            kernel.assign(kernel.numpy() * 0.5)
        # TensorFlow differentiates what ran: the gradient is at the weights the block read
        grads = tape.gradient(loss, model.trainable_variables)
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g, e, rtol=2e-3, atol=1e-5)
    assert short == [False, True, False]


def test_another_target_of_the_same_block(monkeypatch):
    model, x, y = _mlp(13)
    short = _spy(monkeypatch)
    mse = tf.keras.losses.MeanSquaredError()
    expected = _expected(model, x, y)
    for _ in range(3):
        with tf.GradientTape(persistent=True) as tape:
            out = model(x, training=True)
            loss = mse(y, out)
            total = tf.reduce_sum(out)
        grads = tape.gradient(loss, model.trainable_variables)
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g, e, rtol=2e-3, atol=1e-5)
        # d sum(out) / d b2 is the batch size per output
        sums = tape.gradient(total, model.trainable_variables)
        np.testing.assert_allclose(sums[3], np.full(2, x.shape[0]), rtol=1e-6)
        del tape
    # both requests are remembered for the block: from the second step on, each is
    # answered by the short path with its own plan (the values are checked above)
    assert short == [False, False, True, True, True, True]


def test_a_gradient_inside_another_tapes_block(monkeypatch):
    model, x, y = _mlp(17)
    short = _spy(monkeypatch)
    mse = tf.keras.losses.MeanSquaredError()
    expected = _expected(model, x, y)
    for _ in range(3):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as tape:
                loss = mse(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g, e, rtol=2e-3, atol=1e-5)
        del outer
    assert short == [False] * 3  # an outer tape records: the general way
