"""Programs in the style of Keras's guides "The Sequential model", "Making new layers and
models via subclassing" and "Writing a training loop from scratch": feature extraction
from a ``Sequential`` model (``model.inputs``, ``layer.output``, ``get_layer``), ``fit`` and
``evaluate`` on a batched ``tf.data.Dataset`` (also as ``validation_data``) with RMSprop
(Keras 2 puts its epsilon inside the square root), a GAN whose ``compile`` takes its own
optimizers and whose ``train_step`` gets the dataset's batches, ``get_config`` /
``from_config``, ``Sequential.pop`` and ``tf.zeros(1, 1)`` (a dtype given as
TensorFlow's enum number).

The literals were printed by the same programs run with TensorFlow 2.21 and tf_keras.
"""

import numpy as np
import pytest
from tf_weights import regression_data, set_sin_weights

import s2s_ad.tf as tf
from s2s_ad.tf import keras


def _close(got, want):
    np.testing.assert_allclose(np.ravel(got), np.ravel(want), rtol=2e-6, atol=1e-7)


def test_fit_and_evaluate_on_a_batched_dataset_with_rmsprop():
    x, y = regression_data()
    model = keras.Sequential(
        [keras.layers.Dense(5, activation="tanh", input_shape=(4,)), keras.layers.Dense(1)]
    )
    set_sin_weights(model)
    model.compile(optimizer=keras.optimizers.RMSprop(0.01), loss="mse")
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)
    checks = tf.data.Dataset.from_tensor_slices((x[:8], y[:8])).batch(4)
    history = model.fit(data, epochs=3, verbose=0, validation_data=checks)
    # TensorFlow 2.21
    _close(history.history["loss"], [2.1181981563568115, 1.5734331607818604, 1.2527737617492676])
    _close(
        history.history["val_loss"], [1.9530445337295532, 1.5786868333816528, 1.2850208282470703]
    )
    _close(model.evaluate(data, verbose=0), 1.066346526145935)
    _close(model.get_weights()[-1], [0.01892654225230217])


LATENT = 3
NOISE = [
    np.sin(np.arange(8 * LATENT) * (k + 1.3)).reshape(8, LATENT).astype(np.float32)
    for k in range(8)
]


class GAN(keras.Model):
    def __init__(self, discriminator, generator):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.d_loss_tracker = keras.metrics.Mean(name="d_loss")
        self.g_loss_tracker = keras.metrics.Mean(name="g_loss")
        self.k = 0

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.loss_fn = loss_fn

    @property
    def metrics(self):
        return [self.d_loss_tracker, self.g_loss_tracker]

    def train_step(self, real):
        batch_size = tf.shape(real)[0]
        fake = self.generator(NOISE[self.k % 8])
        self.k += 1
        combined = tf.concat([fake, real], axis=0)
        labels = tf.concat([tf.ones((batch_size, 1)), tf.zeros((batch_size, 1))], axis=0)
        labels += 0.05 * tf.ones(tf.shape(labels))
        with tf.GradientTape() as tape:
            predictions = self.discriminator(combined)
            d_loss = self.loss_fn(labels, predictions)
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
        misleading = tf.zeros((batch_size, 1))
        with tf.GradientTape() as tape:
            predictions = self.discriminator(self.generator(NOISE[(self.k + 3) % 8]))
            g_loss = self.loss_fn(misleading, predictions)
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
        self.d_loss_tracker.update_state(d_loss)
        self.g_loss_tracker.update_state(g_loss)
        return {"d_loss": self.d_loss_tracker.result(), "g_loss": self.g_loss_tracker.result()}


def test_a_gan_with_its_own_compile_trained_by_fit_on_a_dataset():
    x, _ = regression_data()
    discriminator = keras.Sequential(
        [
            keras.Input(shape=(4,)),
            keras.layers.Dense(6),
            keras.layers.LeakyReLU(alpha=0.2),
            keras.layers.Dense(1),
        ]
    )
    generator = keras.Sequential(
        [
            keras.Input(shape=(LATENT,)),
            keras.layers.Dense(6),
            keras.layers.LeakyReLU(alpha=0.2),
            keras.layers.Dense(4, activation="sigmoid"),
        ]
    )
    set_sin_weights(discriminator, 0.5)
    set_sin_weights(generator, 0.6)
    gan = GAN(discriminator, generator)
    gan.compile(
        d_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
        g_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
        loss_fn=keras.losses.BinaryCrossentropy(from_logits=True),
    )
    gan.run_eagerly = True  # (TensorFlow: so that self.k counts steps)
    history = gan.fit(
        tf.data.Dataset.from_tensor_slices(np.abs(np.tanh(x))).batch(8), epochs=2, verbose=0
    )
    # TensorFlow 2.21
    _close(history.history["d_loss"], [0.6767518520355225, 0.6760157346725464])
    _close(history.history["g_loss"], [0.8318256139755249, 0.8266088962554932])


class Linear(keras.layers.Layer):
    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones")

    def call(self, inputs):
        return tf.matmul(inputs, self.w)

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units})
        return config


class Bare(keras.layers.Layer):
    def __init__(self, units=32):
        super().__init__()
        self.units = units

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def test_get_config_from_config_pop_and_a_dtype_number():
    layer = Linear(64)
    config = layer.get_config()
    assert sorted(config) == ["dtype", "name", "trainable", "units"]  # TensorFlow 2.21
    again = Linear.from_config(config)
    assert again.units == 64 and again.name == layer.name
    with pytest.raises(TypeError, match="Error when deserializing class 'Bare'"):
        Bare.from_config(Bare(3).get_config())
    dense = keras.layers.Dense(3, activation="relu", name="features")
    config = dense.get_config()
    assert (config["units"], config["activation"], config["use_bias"]) == (3, "relu", True)
    assert keras.layers.Dense.from_config(config).units == 3
    model = keras.Sequential([keras.layers.Dense(2), keras.layers.Dense(3), keras.layers.Dense(4)])
    model.pop()
    assert len(model.layers) == 2
    assert model(np.ones((1, 5), np.float32)).shape == (1, 3)
    zeros = tf.zeros(1, 1)  # TensorFlow's DataType 1: float32
    assert zeros.dtype == np.float32 and zeros.shape == (1,)


def test_feature_extraction_from_a_sequential_models_layer_outputs():
    x, _ = regression_data()
    base = keras.Sequential(
        [
            keras.Input(shape=(4,)),
            keras.layers.Dense(5, activation="relu"),
            keras.layers.Dense(3, activation="tanh", name="middle"),
            keras.layers.Dense(2),
        ]
    )
    set_sin_weights(base)
    extractor = keras.Model(inputs=base.inputs, outputs=[layer.output for layer in base.layers])
    middle = keras.Model(inputs=base.inputs, outputs=base.get_layer(name="middle").output)
    assert base.get_layer(index=1) is base.get_layer(name="middle")
    with tf.GradientTape() as tape:
        features = extractor(x[:4])
        loss = tf.reduce_sum(features[1]) + tf.reduce_sum(features[2] ** 2)
    grads = tape.gradient(loss, base.trainable_variables)
    # TensorFlow 2.21
    assert [f.shape[1] for f in features] == [5, 3, 2]
    _close(float(loss), -0.41303300857543945)
    _close(
        middle(x[:2]),
        [
            0.07678630203008652,
            -0.28660067915916443,
            -0.483834445476532,
            0.1534433662891388,
            -0.18643999099731445,
            -0.41632190346717834,
        ],
    )
    expected = [
        [
            3.0363271236419678,
            -6.837429046630859,
            1.8761568069458008,
            4.943088531494141,
            -2.554403781890869,
            -0.9992391467094421,
            0.750060498714447,
            -0.2097778022289276,
            -0.5382494330406189,
            -1.2279610633850098,
            1.6089818477630615,
            -3.690506935119629,
            1.0125210285186768,
            2.6681723594665527,
            -1.718052625656128,
            0.2022930234670639,
            -3.7022523880004883,
            1.0063824653625488,
            2.6861162185668945,
            -5.6138482093811035,
        ],
        [
            2.2977828979492188,
            -4.663247585296631,
            1.281888723373413,
            3.3689346313476562,
            -3.0297069549560547,
        ],
        [
            2.6123852729797363,
            1.999343991279602,
            0.2612397372722626,
            5.887323379516602,
            4.488277912139893,
            0.589701771736145,
            6.987547397613525,
            5.296182632446289,
            0.703683614730835,
            4.801418781280518,
            3.6132097244262695,
            0.48671191930770874,
            1.3270529508590698,
            0.9564233422279358,
            0.14713500440120697,
        ],
        [7.540848731994629, 5.563951015472412, 0.835272490978241],
        [
            -0.36180534958839417,
            -0.3462137281894684,
            1.0824577808380127,
            1.0567772388458252,
            1.9085440635681152,
            1.856554388999939,
        ],
        [-4.183631896972656, -4.0628342628479],
    ]
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(np.ravel(g), e, rtol=1e-6, atol=1e-6)
