"""Seed 002 (tf.GradientTape chapter) with ``import s2s_ad.tf as tf``: every example,
printing what the chapter prints."""

import s2s_ad.tf as tf

# Create a trainable variable
x = tf.Variable(3.0)
with tf.GradientTape() as tape:
    # Perform an operation involving the variable
    y = x * x  # or tf.square(x)
# dy/dx = 2*x = 2*3 = 6
dy_dx = tape.gradient(y, x)
print(dy_dx)  # tf.Tensor(6.0, shape=(), dtype=float32)
assert dy_dx.numpy() == 6.0

x = tf.constant(3.0)  # Not a Variable
with tf.GradientTape() as tape:
    # Explicitly watch the tensor
    tape.watch(x)
    y = x * x
dy_dx = tape.gradient(y, x)
print(dy_dx)  # tf.Tensor(6.0, shape=(), dtype=float32)
assert dy_dx.numpy() == 6.0

# Assume a simple linear model: y = W*x + b
x_input = tf.constant([[1.0, 2.0, 3.0]], dtype=tf.float32)
y_true = tf.constant([[10.0]], dtype=tf.float32)
W = tf.Variable(tf.random.normal((3, 1)), name="weight")
b = tf.Variable(tf.zeros(1), name="bias")
with tf.GradientTape() as tape:
    # Forward pass: Compute prediction
    y_pred = tf.matmul(x_input, W) + b
    # Compute loss (e.g., Mean Squared Error)
    loss = tf.reduce_mean(tf.square(y_pred - y_true))
gradients = tape.gradient(loss, [W, b])
print("Loss:", loss.numpy())
print("Gradient w.r.t. W:\n", gradients[0].numpy())
print("Gradient w.r.t. b:", gradients[1].numpy())
residual = float((x_input.numpy() @ W.numpy() + b.numpy() - 10.0)[0, 0])
assert abs(gradients[1].numpy()[0] - 2 * residual) < 1e-4

x = tf.Variable(2.0)
with tf.GradientTape(persistent=True) as tape:
    y = x * x  # y = x^2
    z = y * y  # z = y^2 = (x^2)^2 = x^4
dz_dx = tape.gradient(z, x)
print("dz/dx:", dz_dx)  # tf.Tensor(32.0, shape=(), dtype=float32)
dy_dx = tape.gradient(y, x)
print("dy/dx:", dy_dx)  # tf.Tensor(4.0, shape=(), dtype=float32)
assert (dz_dx.numpy(), dy_dx.numpy()) == (32.0, 4.0)
del tape

x = tf.Variable(3.0)
with tf.GradientTape() as tape2:
    with tf.GradientTape() as tape1:
        y = x * x * x  # y = x^3
    # First derivative: dy/dx = 3x^2
    dy_dx = tape1.gradient(y, x)
# Second derivative: d/dx(dy/dx) = d/dx(3x^2) = 6x = 6*3 = 18
d2y_dx2 = tape2.gradient(dy_dx, x)
print("y:", y)  # tf.Tensor(27.0, shape=(), dtype=float32)
print("dy/dx:", dy_dx)  # tf.Tensor(27.0, shape=(), dtype=float32)
print("d2y/dx2:", d2y_dx2)  # tf.Tensor(18.0, shape=(), dtype=float32)
assert (y.numpy(), dy_dx.numpy(), d2y_dx2.numpy()) == (27.0, 27.0, 18.0)

x = tf.Variable(2.0)
y = tf.Variable(5.0)
with tf.GradientTape() as tape:
    if x > 1.0:
        result = x * y  # result = 2.0 * 5.0 = 10.0
    else:
        result = x + y
grads = tape.gradient(result, {"x": x, "y": y})
print(grads["x"])  # tf.Tensor(5.0, shape=(), dtype=float32)
print(grads["y"])  # tf.Tensor(2.0, shape=(), dtype=float32)
assert (grads["x"].numpy(), grads["y"].numpy()) == (5.0, 2.0)

x = tf.Variable(2.7)
with tf.GradientTape() as tape:
    # tf.round is not differentiable
    y = tf.round(x)
grad = tape.gradient(y, x)
print(grad)  # Output: None
assert grad is None
