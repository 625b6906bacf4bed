"""The short GradientTape snippets of the seed documents, with ``import s2s_ad.tf as tf``.

Each prints what its document prints (the values are checked at the end).
"""

import numpy as np

import s2s_ad.tf as tf

results = {}

# seed 000 / 001: dy/dx of x**2 and x*x at 3
x = tf.Variable(3.0)
with tf.GradientTape() as tape:
    y = x * x
dy_dx = tape.gradient(y, x)
print(f"dy/dx at x = 3.0: {dy_dx.numpy()}")
results["x*x"] = dy_dx.numpy()

# seed 001: several variables
x = tf.Variable(2.0)
y = tf.Variable(3.0)
with tf.GradientTape() as tape:
    f = x * x * y + y * y
gradients = tape.gradient(f, [x, y])
print(f"df/dx: {gradients[0].numpy()}")
print(f"df/dy: {gradients[1].numpy()}")
results["df"] = (gradients[0].numpy(), gradients[1].numpy())

# seed 001: nested tapes at x = 1
x = tf.Variable(1.0)
with tf.GradientTape() as tape_2:
    with tf.GradientTape() as tape_1:
        y = x * x * x
    dy_dx = tape_1.gradient(y, x)
d2y_dx2 = tape_2.gradient(dy_dx, x)
print(f"dy/dx: {dy_dx.numpy()}")
print(f"d²y/dx²: {d2y_dx2.numpy()}")
results["nested"] = (dy_dx.numpy(), d2y_dx2.numpy())

# seed 001: stop_gradient
x = tf.Variable(2.0)
y = tf.Variable(3.0)
with tf.GradientTape(persistent=True) as tape:
    f = tf.stop_gradient(x * y)
    g = x * f
dg_dx = tape.gradient(g, x)
dg_dy = tape.gradient(g, y)
print(f"dg/dx: {dg_dx.numpy()}")
print(f"dg/dy: {dg_dy}")
results["stop"] = (dg_dx.numpy(), dg_dy)

# seed 002: persistent tape, z = y**2 = x**4 at 2
x = tf.Variable(2.0)
with tf.GradientTape(persistent=True) as tape:
    y = x * x
    z = y * y
dz_dx = tape.gradient(z, x)
print("dz/dx:", dz_dx)
dy_dx = tape.gradient(y, x)
print("dy/dx:", dy_dx)
results["persistent"] = (dz_dx.numpy(), dy_dx.numpy())

# seed 002: control flow, gradients in a dict
x = tf.Variable(2.0)
y = tf.Variable(5.0)
with tf.GradientTape() as tape:
    if x > 1.0:
        result = x * y
    else:
        result = x + y
grads = tape.gradient(result, {"x": x, "y": y})
print(grads["x"])
print(grads["y"])
results["dict"] = (grads["x"].numpy(), grads["y"].numpy())

# seed 002: round has no gradient
x = tf.Variable(2.7)
with tf.GradientTape() as tape:
    y = tf.round(x)
grad = tape.gradient(y, x)
print(grad)
results["round"] = grad

# seed 003: y = 2 x.x and the gradient 4x
x = tf.range(4, dtype=tf.float32)
with tf.GradientTape() as t:
    t.watch(x)
    y = 2 * tf.tensordot(x, x, axes=1)
x_grad = t.gradient(y, x)
print(x_grad)
results["tensordot"] = x_grad.numpy()


# seed 003: gradients through a data-dependent while loop
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
print(d_grad, d_grad.numpy() == np.float32(d.numpy() / a.numpy()))
results["while"] = abs(d_grad.numpy() - d.numpy() / a.numpy()) <= 1e-3 * abs(d_grad.numpy())

# seed 004: a vector target is summed
x = tf.Variable(2.0)
with tf.GradientTape() as tape:
    y = x * tf.constant([3.0, 4.0])
dy_dx = tape.gradient(y, x)
print(dy_dx)
results["vector"] = dy_dx.numpy()


# seed 004: a custom gradient keeps log(1 + e^x) finite at 100
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
dy_dx = tape.gradient(y, x)
print(dy_dx)
results["log1pexp"] = dy_dx.numpy()

assert results["x*x"] == 6.0
assert results["df"] == (12.0, 10.0)
assert results["nested"] == (3.0, 6.0)
assert results["stop"] == (6.0, None)
assert results["persistent"] == (32.0, 4.0)
assert results["dict"] == (5.0, 2.0)
assert results["round"] is None
assert list(results["tensordot"]) == [0.0, 4.0, 8.0, 12.0]
assert results["while"]
assert results["vector"] == 7.0
assert results["log1pexp"] == 1.0
