"""What Keras code sees of our Keras besides numbers, compared with Keras 2 (tf_keras,
TensorFlow 2.21): the message of an error raised inside a layer, the names of the
Variables a model's first call makes, ``model.summary()`` and ``fit``'s progress lines.
The expected texts are what TensorFlow printed for the same code."""

import re

import numpy as np
import pytest

import s2s_ad.tf as tf
from s2s_ad.tf import keras


class Scale(keras.layers.Layer):
    """A user's layer: a weight matrix from the first input's shape, and a scalar made
    in ``__init__`` (outside any name scope)."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.gain = tf.Variable(1.0, name="gain")

    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(input_shape[-1], self.units), initializer="ones")

    def call(self, x):
        return tf.matmul(x, self.w) * self.gain


class Block(keras.layers.Layer):
    """A layer holding a layer, with a Variable made lazily by its first call."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.inner = Scale(2, name="inner")

    def call(self, x):
        if not hasattr(self, "late"):
            self.late = tf.Variable(2.0, name="late")
        return self.inner(x) * self.late


class Body(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.block = Block(name="block")
        self.head = keras.layers.Dense(1, kernel_initializer="ones", name="head")

    def call(self, x, training=None):
        return self.head(self.block(x))


class Wrapper(keras.Model):
    def __init__(self):
        super().__init__(name="wrapper")
        self.body = Body(name="body")

    def call(self, x):
        return self.body(x)


# --- errors inside a layer's call -------------------------------------------------------


def test_an_op_error_in_call_names_the_layer_and_its_arguments():
    layer = Scale(3, name="scale")
    layer(tf.constant([[1.0, 2.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        layer(tf.constant([[1.0, 2.0, 3.0]]))
    assert str(caught.value) == (
        "Exception encountered when calling layer 'scale' (type Scale).\n\n"
        # TensorFlow 2.21 on a CPU: the kernel's function and device first, the op's name last
        "{{function_node __wrapped__MatMul_device_/job:localhost/replica:0/task:0/device:CPU:0}}"
        " Matrix size-incompatible: In[0]: [1,3], In[1]: [2,3] [Op:MatMul] name: \n\n"
        "Call arguments received by layer 'scale' (type Scale):\n"
        "  • x=tf.Tensor(shape=(1, 3), dtype=float32)"
    )
    assert caught.value.message == str(caught.value)


def test_only_the_innermost_layer_extends_the_message():
    model = Wrapper()
    model(tf.constant([[1.0, 2.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        model(tf.constant([[1.0, 2.0, 3.0]]))
    text = str(caught.value)
    assert text.count("Exception encountered") == 1
    assert text.startswith("Exception encountered when calling layer 'inner' (type Scale).")


class Failing(keras.layers.Layer):
    def call(self, x, training=None, mask=None):
        raise KeyError("no such feature")


class FailingBuild(keras.layers.Layer):
    def build(self, input_shape):
        raise ValueError(f"cannot build for {input_shape}")


def test_python_errors_keep_their_class_and_list_training_and_defaults():
    layer = Failing(name="failing")
    with pytest.raises(KeyError) as caught:
        layer(np.ones((1, 2)), training=True)  # a float64 array: shown as Keras casts it
    assert caught.value.args == (
        "Exception encountered when calling layer 'failing' (type Failing).\n\n"
        "no such feature\n\n"
        "Call arguments received by layer 'failing' (type Failing):\n"
        "  • x=tf.Tensor(shape=(1, 2), dtype=float32)\n"
        "  • training=True\n"
        "  • mask=None",
    )
    with pytest.raises(ValueError, match=r"(?s)^Exception encountered .*'broken'.*for \(3, 4\)"):
        FailingBuild(name="broken")(np.ones((3, 4), np.float32))  # raised by build


def test_gradients_of_a_layer_are_unchanged_by_the_error_handling():
    layer = Scale(2, name="graded")
    x = tf.constant([[1.0, -2.0, 0.5]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x) ** 2)
    g_w, g_gain = tape.gradient(loss, [layer.w, layer.gain])
    out = np.asarray(x) @ layer.w.numpy() * layer.gain.numpy()
    np.testing.assert_allclose(np.asarray(g_w), np.asarray(x).T @ (2.0 * out), rtol=1e-6)
    expected_gain = np.sum(2.0 * out * (np.asarray(x) @ layer.w.numpy()))
    np.testing.assert_allclose(float(g_gain), expected_gain, rtol=1e-6)


# --- names made by a model's first call -------------------------------------------------


def test_a_models_first_call_names_its_sub_layers_variables_under_its_name():
    model = Wrapper()
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:  # the first call inside a tape: named the same
        loss = tf.reduce_sum(model(x))
    assert [v.name for v in model.variables] == [
        "wrapper/body/block/late:0",
        "gain:0",  # made by Scale.__init__, outside any call
        "wrapper/body/block/inner/w:0",
        "wrapper/body/head/kernel:0",
        "wrapper/body/head/bias:0",
    ]
    grads = dict(
        zip(
            [v.name for v in model.trainable_variables],
            tape.gradient(loss, model.trainable_variables),
        )
    )
    # loss = sum(x @ w * gain * late) * 1 + bias: d/dbias = 1, d/dlate = x @ w * gain
    np.testing.assert_allclose(np.asarray(grads["wrapper/body/head/bias:0"]), [1.0])
    np.testing.assert_allclose(float(grads["wrapper/body/block/late:0"]), 6.0)
    model(x)  # later calls make nothing new
    assert len(model.variables) == 5


def test_a_layer_called_alone_names_what_its_call_makes_under_its_own_name():
    block = Block(name="solo")
    block(tf.constant([[1.0, 2.0]]))
    assert [v.name for v in block.variables] == ["solo/late:0", "gain:0", "solo/inner/w:0"]


def test_sequential_models_open_no_scope():
    seq = keras.Sequential(
        [keras.layers.Dense(3, name="first"), keras.layers.Dense(1, name="second")]
    )
    seq(tf.constant([[1.0, 2.0]]))
    assert [v.name for v in seq.variables] == [
        "first/kernel:0",
        "first/bias:0",
        "second/kernel:0",
        "second/bias:0",
    ]


def test_building_a_subclassed_model_builds_its_layers_without_its_name():
    model = Body(name="built_by_hand")
    model.build((None, 2))
    assert [v.name for v in model.variables] == [
        "block/late:0",
        "gain:0",
        "block/inner/w:0",
        "head/kernel:0",
        "head/bias:0",
    ]
    assert _lines(model)[-4] == "Total params: 9 (36.00 Byte)"
    out = model(tf.constant([[1.0, 2.0]]))  # the weights built: the same call as before
    np.testing.assert_allclose(np.asarray(out), [[12.0]])
    assert len(model.variables) == 5


# --- summary() --------------------------------------------------------------------------


def _lines(model, **kwargs):
    lines = []
    model.summary(print_fn=lines.append, **kwargs)
    return lines


def test_summary_of_a_sequential_model():
    model = keras.Sequential(
        [
            keras.layers.Dense(300, input_shape=(40,), name="wide"),
            keras.layers.BatchNormalization(name="batch_normalization"),
            keras.layers.Dropout(0.1, name="dropout"),
            keras.layers.Dense(10, activation="softmax", name="dense"),
        ],
        name="classifier_with_a_rather_long_name",
    )
    blank = " " * 65
    assert _lines(model) == [
        'Model: "classifier_with_a_rather_long_name"',
        "_" * 65,
        " Layer (type)                Output Shape              Param #   ",
        "=" * 65,
        " wide (Dense)                (None, 300)               12300     ",
        blank,
        " batch_normalization (Batch  (None, 300)               1200      ",
        " Normalization)                                                  ",
        blank,
        " dropout (Dropout)           (None, 300)               0         ",
        blank,
        " dense (Dense)               (None, 10)                3010      ",
        blank,
        "=" * 65,
        "Total params: 16510 (64.49 KB)",
        "Trainable params: 15910 (62.15 KB)",
        "Non-trainable params: 600 (2.34 KB)",
        "_" * 65,
    ]


def test_summary_of_a_functional_chain_has_the_input_row():
    inputs = keras.Input(shape=(5, 3), name="input_1")
    h = keras.layers.Flatten(name="flatten")(inputs)
    h = keras.layers.Dense(2, name="dense_4")(h)
    model = keras.Model(inputs, h, name="model")
    blank = " " * 80
    assert _lines(model, line_length=80) == [
        'Model: "model"',
        "_" * 80,
        " Layer (type)                       Output Shape                    Param #     ",
        "=" * 80,
        " input_1 (InputLayer)               [(None, 5, 3)]                  0           ",
        blank,
        " flatten (Flatten)                  (None, 15)                      0           ",
        blank,
        " dense_4 (Dense)                    (None, 2)                       32          ",
        blank,
        "=" * 80,
        "Total params: 32 (128.00 Byte)",
        "Trainable params: 32 (128.00 Byte)",
        "Non-trainable params: 0 (0.00 Byte)",
        "_" * 80,
    ]


class Pair(keras.layers.Layer):
    def call(self, xs):
        return xs[0] * xs[1]


def test_summary_of_a_graph_says_what_each_layer_is_connected_to():
    first = keras.Input(shape=(3,), name="input_2")
    other = keras.Input(shape=(3,), name="other")
    shared = keras.layers.Dense(3, name="dense_5")
    product = Pair(name="pair")([shared(first), other])
    model = keras.Model([first, other], [shared(product), product], name="two")
    blank = " " * 98
    assert _lines(model) == [
        'Model: "two"',
        "_" * 98,
        " Layer (type)                Output Shape                 Param #   Connected to"
        "                  ",
        "=" * 98,
        " input_2 (InputLayer)        [(None, 3)]                  0         []" + " " * 28,
        blank,
        " dense_5 (Dense)             (None, 3)                    12        ['input_2[0][0]',"
        "             ",
        " " * 69 + "'pair[0][0]']                ",
        blank,
        " other (InputLayer)          [(None, 3)]                  0         []" + " " * 28,
        blank,
        " pair (Pair)                 (None, 3)                    0         ['dense_5[0][0]',"
        "             ",
        " " * 69 + "'other[0][0]']               ",
        blank,
        "=" * 98,
        "Total params: 12 (48.00 Byte)",
        "Trainable params: 12 (48.00 Byte)",
        "Non-trainable params: 0 (0.00 Byte)",
        "_" * 98,
    ]


def test_summary_of_a_subclassed_model():
    with pytest.raises(ValueError, match="has not yet been built"):
        Body(name="unbuilt").summary()
    model = Body(name="net")
    model(tf.constant([[1.0, 2.0]]))
    lines = _lines(model)
    assert lines[4] == " block (Block)               multiple                  6         "
    assert lines[6] == " head (Dense)                multiple                  3         "
    assert lines[-4:-1] == [
        "Total params: 9 (36.00 Byte)",
        "Trainable params: 9 (36.00 Byte)",
        "Non-trainable params: 0 (0.00 Byte)",
    ]


# --- fit's progress lines -----------------------------------------------------------------


def _data():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(100, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5], np.float32))[:, None]
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(3,), kernel_initializer="zeros")])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    return model, x, y


def _untimed(text):
    """The output with the times (which differ by nature) replaced by ``T``."""
    text = re.sub(r"ETA: [0-9:]+s?", "ETA: T", text)
    text = re.sub(r"\d+s \d+(s|ms|us)/step", "T T/step", text)
    return re.sub(r"\d+(s|ms|us)/(epoch|step)", r"T/\2", re.sub(r" - \d+s - ", " - T - ", text))


def test_fit_verbose_1_draws_keras_bars(capsys):
    model, x, y = _data()
    model.fit(x, y, epochs=2, batch_size=32, shuffle=False)
    out = capsys.readouterr().out
    lines = out.split("\n")
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and lines[4] == ""
    for line, loss, mae in ((lines[1], "3.3051", "1.4742"), (lines[3], "0.7418", "0.6909")):
        # the bar redrawn in place: backspaces over the last one, a carriage return
        final = line.split("\r")[-1]
        assert (
            _untimed(final)
            == f"4/4 [==============================] - T T/step - loss: {loss} - mae: {mae}"
        )
        first = line.split("\r")[1].rstrip("\b")
        assert _untimed(first).startswith("1/4 [======>.......................] - ETA: T - loss: ")


def test_fit_verbose_2_prints_a_line_per_epoch(capsys):
    model, x, y = _data()
    model.fit(x, y, epochs=2, batch_size=32, shuffle=False)  # as in the TensorFlow run
    capsys.readouterr()
    model.fit(
        x, y, epochs=2, batch_size=32, verbose=2, shuffle=False, validation_data=(x[:10], y[:10])
    )
    assert _untimed(capsys.readouterr().out).split("\n") == [
        "Epoch 1/2",
        "4/4 - T - loss: 0.1713 - mae: 0.3291 - val_loss: 0.0215 - val_mae: 0.1174"
        " - T/epoch - T/step",
        "Epoch 2/2",
        "4/4 - T - loss: 0.0406 - mae: 0.1589 - val_loss: 0.0055 - val_mae: 0.0587"
        " - T/epoch - T/step",
        "",
    ]
    model.evaluate(x, y)
    final = capsys.readouterr().out.split("\r")[-1]
    assert (
        _untimed(final)
        == "4/4 [==============================] - T T/step - loss: 0.0139 - mae: 0.0922\n"
    )
    model.fit(x, y, epochs=1, verbose=0)
    assert capsys.readouterr().out == ""


def _masked_step(x):
    """A Dense, Dropout and BatchNormalization first called inside a tape's block."""
    dense = keras.layers.Dense(6, kernel_initializer="ones")
    drop = keras.layers.Dropout(0.5)
    norm = keras.layers.BatchNormalization()
    with tf.GradientTape() as tape:
        h = drop(dense(x), training=True)
        loss = tf.reduce_sum(norm(h, training=True) * h)
    return np.asarray(h), norm, tape.gradient(loss, dense.bias)


def test_layers_first_called_in_a_block_are_differentiated_as_they_ran():
    """A first call runs build and call under the layer's name scope, outside the tape's
    recorded calls: the gradient still uses the block's dropout mask, and the moving
    statistics are updated once (also when other instances compiled the classes)."""
    x = np.linspace(-1.0, 1.0, 24).reshape(4, 6).astype(np.float32)
    for _ in range(2):
        tf.random.set_seed(3)
        h, norm, g_bias = _masked_step(x)
        kept = h != 0

        def loss_of(bias, kept=kept):
            pre = np.where(kept, (x @ np.ones((6, 6)) + bias) * 2.0, 0.0)
            normed = (pre - pre.mean(0)) / np.sqrt(pre.var(0) + 1e-3)
            return float(np.sum(normed * pre))

        eps = 1e-4
        fd = [
            (loss_of(eps * np.eye(6)[i]) - loss_of(-eps * np.eye(6)[i])) / (2 * eps)
            for i in range(6)
        ]
        np.testing.assert_allclose(np.asarray(g_bias), fd, rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(norm.moving_mean.numpy(), 0.01 * h.mean(0), rtol=1e-5)


def test_a_matmul_error_has_tensorflows_text_even_with_a_name():
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        tf.matmul(np.ones((1, 3), np.float32), np.ones((2, 3), np.float32), name="proj")
    # TensorFlow 2.21 on a CPU (the name after ``name:`` stays empty)
    assert str(caught.value) == (
        "{{function_node __wrapped__MatMul_device_/job:localhost/replica:0/task:0/device:CPU:0}}"
        " Matrix size-incompatible: In[0]: [1,3], In[1]: [2,3] [Op:MatMul] name: "
    )
