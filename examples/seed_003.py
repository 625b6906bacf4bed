"""Seed 003 (d2l, "Automatic Differentiation") with ``import s2s_ad.tf as tf``.

Prints what the chapter shows: y = 2 x.x = 28 and its gradient 4x, the gradient of
reduce_sum (ones), of x * x (2x), stop_gradient (u), and a data-dependent while loop
whose gradient is f(a) / a.
"""

import numpy as np

import s2s_ad.tf as tf

x = tf.range(4, dtype=tf.float32)
print(repr(x))
with tf.GradientTape() as t:
    t.watch(x)
    y = 2 * tf.tensordot(x, x, axes=1)
print(repr(y))
x_grad = t.gradient(y, x)
print(repr(x_grad))
print(repr(x_grad == 4 * x))
assert list(x_grad.numpy()) == [0.0, 4.0, 8.0, 12.0]

with tf.GradientTape() as t:
    t.watch(x)
    y = tf.reduce_sum(x)
ones = t.gradient(y, x)  # Overwritten by the newly calculated gradient
print(repr(ones))
assert list(ones.numpy()) == [1.0, 1.0, 1.0, 1.0]

with tf.GradientTape() as t:
    t.watch(x)
    y = x * x
twice = t.gradient(y, x)  # Same as y = tf.reduce_sum(x * x)
print(repr(twice))
assert list(twice.numpy()) == [0.0, 2.0, 4.0, 6.0]

# Set persistent=True to preserve the compute graph.
# This lets us run t.gradient more than once
with tf.GradientTape(persistent=True) as t:
    t.watch(x)
    y = x * x
    u = tf.stop_gradient(y)
    z = u * x
x_grad = t.gradient(z, x)
print(repr(x_grad == u))
print(repr(t.gradient(y, x) == 2 * x))
assert np.all(x_grad.numpy() == u.numpy())


def f(a):
    b = a * 2
    while tf.norm(b) < 1000:
        b = b * 2
    if tf.reduce_sum(b) > 0:
        c = b
    else:
        c = 100 * b
    return c


a = tf.Variable(tf.random.normal(shape=()))
with tf.GradientTape() as t:
    d = f(a)
d_grad = t.gradient(d, a)
print(repr(d_grad))
print(repr(d_grad == d / a))
assert abs(d_grad.numpy() - d.numpy() / a.numpy()) <= 1e-3 * abs(d_grad.numpy())
