"""Keras through ``s2s_ad.tf``: modules and layers find their Variables in TensorFlow's
order, models train with a tape, and dropout, BatchNormalization and metrics used inside
a tape's block give TensorFlow's gradients and leave TensorFlow's state."""

import numpy as np
import pytest

import s2s_ad.tf as tf
from s2s_ad.tf import keras


class _Affine(tf.Module):
    def __init__(self, n_in, n_out, name=None):
        super().__init__(name=name)
        rng = np.random.default_rng(n_in * 10 + n_out)
        self.w = tf.Variable(rng.standard_normal((n_in, n_out)), name="w", dtype=np.float32)
        self.b = tf.Variable(np.zeros(n_out), name="b", dtype=np.float32)

    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


class _Stack(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.second = _Affine(4, 2)
        self.first = _Affine(3, 4)
        self.scale = tf.Variable(1.0, name="scale", trainable=False)

    def __call__(self, x):
        return self.second(self.first(x)) * self.scale


def test_module_variables_are_sorted_by_attribute_then_submodules():
    model = _Stack(name="stack")
    assert model.name == "stack"
    names = [v.name for v in model.variables]
    # own Variables first; then first's (b, w), then second's (b, w)
    assert names == ["scale:0", "b:0", "w:0", "b:0", "w:0"]
    assert model.variables[1] is model.first.b and model.variables[3] is model.second.b
    assert isinstance(model.variables, tuple)
    assert [v.name for v in model.trainable_variables] == ["b:0", "w:0", "b:0", "w:0"]
    assert model.submodules == (model.first, model.second)
    assert _Affine(1, 1).name == "__affine" or _Affine(1, 1).name.endswith("affine")


def test_module_gradients_for_all_trainable_variables():
    model = _Stack()
    x = tf.constant([[1.0, -2.0, 0.5]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    assert [g.shape for g in grads] == [(4,), (3, 4), (2,), (4, 2)]
    # finite differences on the first layer's kernel
    w = model.first.w
    base = w.numpy().copy()

    def loss_at(kernel):
        w.assign(kernel)
        return float(np.sum(np.asarray(model(x)) ** 2))

    numeric = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        step = np.zeros_like(base)
        step[idx] = 1e-3
        numeric[idx] = (loss_at(base + step) - loss_at(base - step)) / 2e-3
    w.assign(base)
    np.testing.assert_allclose(np.asarray(grads[1]), numeric, rtol=1e-2, atol=1e-2)


def test_dense_activation_by_name_or_callable_and_weight_names():
    tf.random.set_seed(0)
    relu_layer = keras.layers.Dense(3, activation="relu")
    fn_layer = keras.layers.Dense(3, activation=tf.nn.relu, use_bias=False)
    x = tf.constant([[1.0, -1.0], [0.5, 2.0]])
    assert relu_layer.variables == [] and not relu_layer.built
    y = relu_layer(x)
    assert y.shape == (2, 3) and np.all(np.asarray(y) >= 0)
    assert [v.name for v in relu_layer.variables] == [
        f"{relu_layer.name}/kernel:0",
        f"{relu_layer.name}/bias:0",
    ]
    fn_layer(x)
    assert len(fn_layer.trainable_variables) == 1
    init = keras.layers.Dense(2, kernel_initializer="ones", bias_initializer="zeros")
    assert np.asarray(init(x)).tolist() == [[0.0, 0.0], [2.5, 2.5]]


class _Scaled(keras.layers.Layer):
    """A layer written the Keras way: weights made in build from the input shape."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units), initializer="ones")
        self.gain = self.add_weight("gain", (), initializer="ones")
        self.calls = self.add_weight("calls", (), initializer="zeros", trainable=False)

    def call(self, inputs):
        self.calls.assign_add(1.0)
        return tf.matmul(inputs, self.kernel) * self.gain


def test_layer_subclass_build_add_weight_call_and_state_updated_once():
    layer = _Scaled(2)
    x = tf.constant([[1.0, 2.0, 3.0]])
    with tf.GradientTape() as tape:
        y = layer(x)
        loss = tf.reduce_sum(y)
    g_kernel, g_gain = tape.gradient(loss, layer.trainable_variables)
    assert layer.calls.numpy() == 1.0  # the call's counter moved once, not twice
    np.testing.assert_allclose(np.asarray(g_kernel), [[1, 1], [2, 2], [3, 3]])
    assert g_gain.numpy() == pytest.approx(12.0)
    assert [w.name.split("/")[1] for w in layer.weights] == ["kernel:0", "gain:0", "calls:0"]


def test_sequential_with_input_shape_is_built_at_once_and_trains():
    tf.random.set_seed(1)
    model = keras.Sequential(
        [
            keras.layers.Dense(16, activation="tanh", input_shape=(2,)),
            keras.layers.Dense(1),
        ]
    )
    assert model.built and len(model.trainable_variables) == 4
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (128, 2)).astype(np.float32)
    y = (x[:, :1] * x[:, 1:]).astype(np.float32)
    optimizer = keras.optimizers.Adam(learning_rate=0.02)
    loss_fn = keras.losses.MeanSquaredError()
    first = None
    for _ in range(150):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        first = float(loss) if first is None else first
    assert float(loss) < 0.2 * first


def test_sequential_is_built_on_its_first_call():
    model = keras.Sequential([keras.layers.Flatten(), keras.layers.Dense(3)])
    assert not model.trainable_variables
    out = model(np.ones((2, 2, 2), np.float32))
    assert out.shape == (2, 3) and model.trainable_variables[0].shape == (4, 3)


def test_functional_model_from_input():
    inputs = keras.Input(shape=(3,))
    hidden = keras.layers.Dense(4, activation="relu")(inputs)
    outputs = keras.layers.Dense(2)(hidden)
    model = keras.Model(inputs=inputs, outputs=outputs)
    assert len(model.layers) == 2 and len(model.trainable_variables) == 4
    x = tf.constant([[1.0, 2.0, 3.0]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    assert [g.shape for g in grads] == [(3, 4), (4,), (4, 2), (2,)]
    # d loss / d output bias is one per output
    np.testing.assert_allclose(np.asarray(grads[3]), [1.0, 1.0])


def test_dropout_layer_in_training_uses_the_mask_of_the_forward_pass():
    tf.random.set_seed(2)
    dense = keras.layers.Dense(6, kernel_initializer="ones", bias_initializer="ones")
    drop = keras.layers.Dropout(0.5)
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        h = drop(dense(x), training=True)
        loss = tf.reduce_sum(h)
    g_bias = np.asarray(tape.gradient(loss, dense.bias))
    kept = np.asarray(h)[0] != 0
    assert 0 < kept.sum() < 6
    np.testing.assert_allclose(g_bias, np.where(kept, 2.0, 0.0))
    assert np.asarray(drop(x, training=False)).tolist() == [[1.0, 2.0]]


def test_batch_normalization_training_gradient_and_moving_statistics():
    bn = keras.layers.BatchNormalization(momentum=0.9)
    x = tf.constant(np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]], np.float32))
    weights = np.array([[1.0, -2.0], [0.5, 1.0], [2.0, 0.3]], np.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = bn(x, training=True)
        loss = tf.reduce_sum(y * weights)
    g_x, (g_gamma, g_beta) = tape.gradient(loss, [x, bn.trainable_variables])
    batch_mean = np.asarray(x).mean(axis=0)
    batch_var = np.asarray(x).var(axis=0)
    # the moving statistics moved once (the gradient's re-run did not move them again)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.1 * batch_mean, rtol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.9 + 0.1 * batch_var, rtol=1e-6)

    def reference(values):
        mean = values.mean(axis=0)
        var = values.var(axis=0)
        return float(np.sum((values - mean) / np.sqrt(var + 0.001) * weights))

    base = np.asarray(x, np.float64)
    numeric = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        step = np.zeros_like(base)
        step[idx] = 1e-4
        numeric[idx] = (reference(base + step) - reference(base - step)) / 2e-4
    np.testing.assert_allclose(np.asarray(g_x), numeric, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(np.asarray(g_beta), weights.sum(axis=0), rtol=1e-6)
    normalized = (base - batch_mean) / np.sqrt(batch_var + 0.001)
    np.testing.assert_allclose(np.asarray(g_gamma), (normalized * weights).sum(0), rtol=1e-4)
    inference = np.asarray(bn(x, training=False))
    expected = (base - bn.moving_mean.numpy()) / np.sqrt(bn.moving_variance.numpy() + 0.001)
    np.testing.assert_allclose(inference, expected, rtol=1e-5)


class _Classifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(32, activation="relu")
        self.drop = keras.layers.Dropout(0.2)
        self.norm = keras.layers.BatchNormalization()
        self.out = keras.layers.Dense(3)
        self.seen = keras.metrics.Mean(name="seen")

    def call(self, x, training=None):
        self.seen.update_state(tf.reduce_mean(x))
        h = self.hidden(x)
        h = self.norm(h, training=training)
        return self.out(self.drop(h, training=training))


def _blobs(n, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    centers = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    x = centers[labels] + 0.5 * rng.standard_normal((n, 2))
    return x.astype(np.float32), labels


def test_a_keras_classifier_trained_with_a_tape_and_metrics():
    tf.random.set_seed(3)
    model = _Classifier()
    x, labels = _blobs(300, 0)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    mean_loss = keras.metrics.Mean()
    for _epoch in range(8):
        accuracy.reset_state()
        mean_loss.reset_state()
        for start in range(0, 300, 50):
            xb, yb = x[start : start + 50], labels[start : start + 50]
            with tf.GradientTape() as tape:
                logits = model(xb, training=True)
                loss = loss_fn(yb, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            accuracy.update_state(yb, logits)
            mean_loss.update_state(loss)
    # the metric inside call() was updated once per call, not again by gradient()
    assert model.seen.count.numpy() == 8 * 6
    test_x, test_labels = _blobs(200, 1)
    predicted = np.argmax(np.asarray(model(test_x, training=False)), axis=1)
    assert np.mean(predicted == test_labels) > 0.9
    assert float(accuracy.result()) > 0.85
    assert len(model.non_trainable_variables) == 2  # the moving statistics


def test_a_loss_scaled_by_metrics_called_in_the_block():
    # a custom loop that divides the loss by its running mean and weighs it by the
    # accuracy: the metrics' values carry no gradient, and each is updated once per step
    tf.random.set_seed(5)
    model = keras.Sequential(
        [keras.layers.Dense(8, activation="relu", input_shape=(2,)), keras.layers.Dense(3)]
    )
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    running = keras.metrics.Mean()
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    x, labels = _blobs(40, 2)
    for step in range(1, 4):
        with tf.GradientTape() as tape:
            logits = model(x)
            raw = loss_fn(labels, logits)
            acc = accuracy(labels, logits)
            scale = running(raw)
            loss = raw / scale * (2.0 - acc)
        grads = tape.gradient(loss, model.trainable_variables)
        with tf.GradientTape() as plain:
            plain_loss = loss_fn(labels, model(x))
        expected = plain.gradient(plain_loss, model.trainable_variables)
        factor = (2.0 - float(acc)) / float(scale)
        for got, want in zip(grads, expected):
            np.testing.assert_allclose(np.asarray(got), factor * np.asarray(want), rtol=1e-5)
        assert running.count.numpy() == step
        assert accuracy.count.numpy() == 40 * step


def test_metrics_update_result_reset():
    mean = keras.metrics.Mean()
    mean.update_state([1.0, 2.0, 3.0])
    mean.update_state(4.0, sample_weight=3.0)
    assert mean.result().numpy() == pytest.approx((6.0 + 12.0) / 6.0)
    mean.reset_state()
    assert mean.result().numpy() == 0.0
    cat = keras.metrics.CategoricalAccuracy()
    cat.update_state([[0, 1], [1, 0]], [[0.2, 0.8], [0.3, 0.7]])
    assert cat.result().numpy() == pytest.approx(0.5)
    sparse = keras.metrics.SparseCategoricalAccuracy()
    assert sparse([1, 0, 1], [[0.1, 0.9], [0.8, 0.2], [0.7, 0.3]]).numpy() == pytest.approx(2 / 3)


def test_optimizer_steps_follow_keras_formulas():
    g = np.array([0.5, -1.0])
    v = tf.Variable([1.0, 2.0])
    sgd = keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
    sgd.apply_gradients([(g, v)])
    sgd.apply_gradients([(g, v)])
    # velocity: -0.1 g, then 0.9 * (-0.1 g) - 0.1 g
    np.testing.assert_allclose(v.numpy(), [1.0, 2.0] - 0.1 * g - 0.19 * g, rtol=1e-6)
    w = tf.Variable([1.0, 2.0])
    rms = keras.optimizers.RMSprop(learning_rate=0.01, rho=0.9)
    rms.apply_gradients([(g, w)])
    expected = np.array([1.0, 2.0]) - 0.01 * g / (np.sqrt(0.1 * g * g) + 1e-7)
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6)
    u = tf.Variable([1.0, 2.0])
    adam = keras.optimizers.Adam(learning_rate=0.1)
    adam.apply_gradients([(g, u)])
    np.testing.assert_allclose(u.numpy(), [1.0 - 0.1, 2.0 + 0.1], rtol=1e-5)
    assert int(adam.iterations.numpy()) == 1


def test_losses_as_functions_and_classes():
    y_true = np.array([[0.0, 1.0], [1.0, 0.0]])
    y_pred = np.array([[0.2, 0.8], [0.6, 0.4]])
    per_example = keras.losses.mean_squared_error(y_true, y_pred)
    np.testing.assert_allclose(np.asarray(per_example), [0.04, 0.16])
    assert keras.losses.MeanSquaredError()(y_true, y_pred).numpy() == pytest.approx(0.1)
    cce = keras.losses.CategoricalCrossentropy()(y_true, y_pred).numpy()
    assert cce == pytest.approx(-(np.log(0.8) + np.log(0.6)) / 2, rel=1e-6)
    logits = np.array([[2.0, 0.5, -1.0]])
    sparse = keras.losses.SparseCategoricalCrossentropy(from_logits=True)([0], logits)
    expected = -(2.0 - np.log(np.sum(np.exp(logits))))
    assert sparse.numpy() == pytest.approx(expected, rel=1e-6)
    bce = keras.losses.BinaryCrossentropy(from_logits=True)([[1.0]], [[0.3]]).numpy()
    assert bce == pytest.approx(np.log1p(np.exp(-0.3)), rel=1e-6)


def test_compile_and_fit():
    tf.random.set_seed(5)
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, 256).astype(np.float32)
    y = (3.0 * x + 2.0).astype(np.float32)

    class Line(keras.Model):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)

        def call(self, x):
            return self.w * x + self.b

    model = Line()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.1), loss="mse")
    history = model.fit(x, y, epochs=20, batch_size=64, verbose=0)
    assert history.history["loss"][-1] < 0.01 * history.history["loss"][0]
    assert model.w.numpy() == pytest.approx(3.0, abs=0.05)
    assert model.b.numpy() == pytest.approx(2.0, abs=0.05)


class _Lazy(keras.layers.Layer):
    """Variables made as attributes in build (not with add_weight)."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = tf.Variable(tf.random.normal([input_shape[-1], self.units]), name="w")
        self.b = tf.Variable(tf.zeros([self.units]), name="b")

    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b


class _TwoLazy(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense_1 = _Lazy(3)
        self.dense_2 = _Lazy(2)

    def call(self, x):
        return self.dense_2(self.dense_1(x))


def test_layers_building_variables_as_attributes_and_a_subclassed_model():
    layer = _Lazy(3)
    assert layer.variables == []
    layer(tf.constant([[2.0, 2.0, 2.0]]))
    # made by the first call: under the layer's name scope, as in Keras
    assert [v.name for v in layer.variables] == ["lazy/w:0", "lazy/b:0"]
    model = _TwoLazy(name="the_model")
    assert model.name == "the_model"
    with tf.GradientTape() as tape:
        out = tf.reduce_sum(model(tf.constant([[1.0, 2.0, 3.0]])))
    grads = tape.gradient(out, model.trainable_variables)
    assert [v.shape for v in model.variables] == [(3, 3), (3,), (3, 2), (2,)]
    assert [g.shape for g in grads] == [(3, 3), (3,), (3, 2), (2,)]
    np.testing.assert_allclose(np.asarray(grads[3]), [1.0, 1.0])
    assert model.submodules[:2] == (model.dense_1, model.dense_2)


def test_jacobians_with_layers_made_inside_the_block():
    tf.random.set_seed(7)
    x = tf.random.normal([2, 3])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        first = keras.layers.Dense(4, activation=tf.nn.elu)
        second = keras.layers.Dense(5, activation=tf.nn.elu)
        y = second(first(x))
    full = tape.jacobian(y, x)
    per_example = tape.batch_jacobian(y, x)
    assert full.shape == (2, 5, 2, 3) and per_example.shape == (2, 5, 3)
    np.testing.assert_allclose(np.asarray(tf.einsum("bxby->bxy", full)), per_example)
    kernel_jac = tape.jacobian(y, first.kernel)
    kernel_grad = tape.gradient(y, first.kernel)
    np.testing.assert_allclose(
        np.asarray(tf.reduce_sum(kernel_jac, axis=[0, 1])), np.asarray(kernel_grad), rtol=1e-5
    )


def test_optimizer_minimize_with_a_loss_function():
    w = tf.Variable(5.0)
    optimizer = keras.optimizers.SGD(learning_rate=0.1)

    def loss_fn():
        return (w - 3.0) ** 2

    for _ in range(60):
        optimizer.minimize(loss_fn, var_list=[w])
    assert w.numpy() == pytest.approx(3.0, abs=1e-4)
    assert int(optimizer.iterations.numpy()) == 60
