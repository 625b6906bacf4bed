"""Regularizers (``keras.regularizers``: ``l1``, ``l2``, ``L1L2``): a Dense layer's
``kernel_regularizer``, ``bias_regularizer`` and ``activity_regularizer`` and
``add_weight(regularizer=...)`` in a layer of one's own; their penalties are in the
layer's ``losses`` (computed by each call, or from the weights as they are before any),
differentiated by a tape (``loss + tf.add_n(model.losses)``) and added by ``fit``.
They were silently ignored before (and an unknown keyword of a layer too: now a
``TypeError`` as in Keras).

The literals were printed by the same programs run with TensorFlow 2.21 and tf_keras.
"""

import numpy as np
import pytest
from tf_weights import regression_data, set_sin_weights

import s2s_ad.tf as tf
from s2s_ad.tf import keras


def _regularized_model():
    l2 = keras.regularizers.l2
    model = keras.Sequential(
        [
            keras.layers.Dense(4, activation="relu", kernel_regularizer=l2(1e-2), input_shape=(4,)),
            keras.layers.Dense(
                3,
                kernel_regularizer="l1",
                bias_regularizer=keras.regularizers.L1L2(l1=0.01, l2=0.02),
                activity_regularizer=l2(0.05),
            ),
            keras.layers.Dense(1),
        ]
    )
    set_sin_weights(model)
    return model


def _custom_loop():
    x, y = regression_data()
    model = _regularized_model()
    model(x[:8])
    first = [float(v) for v in model.losses]
    loss_fn = keras.losses.MeanSquaredError()
    optimizer = keras.optimizers.SGD(0.1)
    steps = []
    for _ in range(3):
        with tf.GradientTape() as tape:
            pred = model(x[:8], training=True)
            loss = loss_fn(y[:8], pred) + tf.add_n(model.losses)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        steps.append(float(loss))
    return first, steps, [g.numpy() for g in grads]


def _compiled():
    x, y = regression_data()
    model = _regularized_model()
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    return history.history["loss"], model.evaluate(x, y, verbose=0)


class Scaled(keras.layers.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(
            "w",
            shape=(input_shape[-1], 2),
            initializer="ones",
            regularizer=keras.regularizers.l2(0.1),
        )

    def call(self, inputs):
        return tf.matmul(inputs, self.w)


def _own_layer():
    x, _ = regression_data()
    layer = Scaled()
    with tf.GradientTape() as tape:
        out = tf.reduce_sum(layer(x[:2])) + tf.add_n(layer.losses)
    return tape.gradient(out, layer.w).numpy()


def _close(got, want):
    np.testing.assert_allclose(np.ravel(got), np.ravel(want), rtol=1e-5, atol=1e-6)


def test_regularized_dense_layers_in_a_custom_training_loop():
    first, steps, grads = _custom_loop()
    # TensorFlow 2.21
    _close(
        first,
        [0.019096510484814644, 0.019104888662695885, 0.036638498306274414, 0.014143729582428932],
    )
    _close(steps, [2.935413360595703, 1.2619714736938477, 1.0014840364456177])
    expected = [
        [
            0.13032273948192596,
            -0.0675930604338646,
            0.0005762274377048016,
            0.010867644101381302,
            -0.19711652398109436,
            0.7035435438156128,
            -0.08364532142877579,
            -0.008947458118200302,
            -0.15181423723697662,
            0.046282198280096054,
            -0.0022399164736270905,
            0.011386491358280182,
            -0.0334148034453392,
            0.43608981370925903,
            -0.041554663330316544,
            -0.00924493744969368,
        ],
        [-0.2548673450946808, 0.16198331117630005, -0.01747884973883629, 0.003914677072316408],
        [
            -0.1821204572916031,
            -0.27396249771118164,
            -0.25202223658561707,
            0.10713084787130356,
            0.10874257236719131,
            0.055022887885570526,
            0.15598776936531067,
            0.21490123867988586,
            0.1577327847480774,
            0.22114433348178864,
            0.2840871810913086,
            0.1983039230108261,
        ],
        [-0.22062060236930847, -0.37621018290519714, -0.3391968011856079],
        [0.43642526865005493, 0.26299911737442017, -0.038498371839523315],
        [0.4950714707374573],
    ]
    for g, e in zip(grads, expected):
        _close(g, e)


def test_regularized_dense_layers_trained_by_fit():
    losses, score = _compiled()
    expected = ([1.7130672931671143, 1.0087149143218994], 0.6646001935005188)  # TensorFlow 2.21
    _close(losses, expected[0])
    _close(score, expected[1])


def test_a_weight_regularizer_of_a_layer_of_ones_own():
    g = _own_layer()
    _close(
        g,
        [
            3.8316104412078857,
            3.8316104412078857,
            -0.3771206736564636,
            -0.3771206736564636,
            2.128826379776001,
            2.128826379776001,
            2.2895359992980957,
            2.2895359992980957,
        ],
    )  # TensorFlow 2.21
    # the penalty's part: 2 * 0.1 * w (w is ones), beside the matmul's column sums
    x, _ = regression_data()
    _close(g, (np.sum(x[:2], axis=0)[:, None] + 0.2) * np.ones((1, 2)))


def test_an_unknown_keyword_of_a_layer_is_refused():
    with pytest.raises(TypeError, match="Keyword argument not understood"):
        keras.layers.Dense(3, kernel_regulariser="l2")
