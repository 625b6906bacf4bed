"""Seed 004 (TensorFlow AutoDiff, J. Hui) with ``import s2s_ad.tf as tf``: the examples
the article describes (its code is in screenshots), printing their numbers."""

import numpy as np

import s2s_ad.tf as tf

# A dense layer: the gradient of the loss has the shape of the kernel
layer = tf.keras.layers.Dense(2, activation="relu")
x = tf.constant([[1.0, 2.0, 3.0]])
with tf.GradientTape() as tape:
    y = layer(x)
    loss = tf.reduce_mean(y**2)
dl_dw, dl_db = tape.gradient(loss, [layer.kernel, layer.bias])
print(dl_dw.shape)  # (3, 2)
assert dl_dw.shape == (3, 2)

# Vector output: the gradient is the sum of the components' gradients
x = tf.Variable(2.0)
with tf.GradientTape() as tape:
    y = x * tf.constant([3.0, 4.0])
print(tape.gradient(y, x))  # 7.0
x_vec = tf.Variable(2.0)
with tf.GradientTape() as tape:
    y = x_vec * tf.constant([3.0, 4.0])
assert tape.gradient(y, x_vec).numpy() == 7.0


# Custom gradient: log(1 + e^x) has gradient 1 at x = 100
@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))

    return tf.math.log(1 + e), grad


x = tf.constant(100.0)
with np.errstate(over="ignore"), tf.GradientTape() as tape:
    tape.watch(x)
    y = log1pexp(x)
with np.errstate(over="ignore"):
    dy_dx = tape.gradient(y, x)
print(dy_dx)  # 1.0
assert dy_dx.numpy() == 1.0

# Gradient clipping by norm
grads = [tf.constant([3.0, 4.0]), tf.constant([12.0])]
clipped, norm = tf.clip_by_global_norm(grads, 6.5)
print(norm, [c.numpy() for c in clipped])
assert norm.numpy() == 13.0 and np.allclose(clipped[0].numpy(), [1.5, 2.0])

# Getting a gradient of None: non-trainable variables, tensors and constants
x0 = tf.Variable(3.0, name="x0")
x1 = tf.Variable(3.0, name="x1", trainable=False)
x2 = tf.Variable(2.0, name="x2") + 1.0
x3 = tf.constant(3.0)
with tf.GradientTape() as tape:
    y = (x0**2) + (x1**2) + (x2**2) + (x3**2)
grad = tape.gradient(y, [x0, x1, x2, x3])
for g in grad:
    print(g)  # 6.0, None, None, None
assert grad[0].numpy() == 6.0 and grad[1:] == [None, None, None]

# Watching the input makes its gradient available; intermediate results are recorded
x = tf.constant(3.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = x * x
    z = y * y
print(tape.gradient(z, y))  # dz/dy = 18
x = tf.constant(3.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = x * x
    z = y * y
assert tape.gradient(z, y).numpy() == 18.0

# A state change (assign_add) blocks the gradient; adding into a Tensor does not
x0 = tf.Variable(1.0)
x1 = tf.Variable(2.0)
with tf.GradientTape() as tape:
    x1.assign_add(x0)
    y = x1**2
print(tape.gradient(y, x0))  # None
x0 = tf.Variable(1.0)
x1 = tf.Variable(2.0)
with tf.GradientTape() as tape:
    x2 = x1 + x0
    y = x2**2
print(tape.gradient(y, x0))  # 6.0
x0 = tf.Variable(1.0)
x1 = tf.Variable(2.0)
with tf.GradientTape() as tape:
    x2 = x1 + x0
    y = x2**2
assert tape.gradient(y, x0).numpy() == 6.0
