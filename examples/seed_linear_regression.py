"""Seed 001, "Building a Custom Training Loop": linear regression with GradientTape.

The document's code with its import changed to ``import s2s_ad.tf as tf``; the data are
drawn with a fixed seed.
"""

import numpy as np

import s2s_ad.tf as tf

np.random.seed(0)
# True parameters
true_w = 2.0
true_b = 1.0
# Generate synthetic data with some noise
x_data = np.random.randn(1000).astype(np.float32)
y_data = true_w * x_data + true_b + 0.1 * np.random.randn(1000).astype(np.float32)
# Create TensorFlow dataset
dataset = tf.data.Dataset.from_tensor_slices((x_data, y_data))
dataset = dataset.batch(32)
# Initialize model parameters
w = tf.Variable(0.0)
b = tf.Variable(0.0)
# Optimization parameters
learning_rate = 0.1
epochs = 100


# Mean squared error loss function
def loss_fn(y_pred, y_true):
    return tf.reduce_mean(tf.square(y_pred - y_true))


# Training step
for epoch in range(epochs):
    epoch_loss = 0.0
    for x_batch, y_batch in dataset:
        with tf.GradientTape() as tape:
            # Forward pass
            y_pred = w * x_batch + b
            # Compute loss
            batch_loss = loss_fn(y_pred, y_batch)
        # Get gradients
        gradients = tape.gradient(batch_loss, [w, b])
        # Update parameters using gradient descent
        w.assign_sub(learning_rate * gradients[0])
        b.assign_sub(learning_rate * gradients[1])
        epoch_loss += batch_loss
    if epoch % 10 == 0:
        print(f"Epoch {epoch}, Loss: {epoch_loss.numpy() / (len(x_data) / 32)}")
        print(f"Parameters: w = {w.numpy()}, b = {b.numpy()}")

print("\nFinal parameters:")
print(f"w = {w.numpy()}, true_w = {true_w}")
print(f"b = {b.numpy()}, true_b = {true_b}")
assert abs(w.numpy() - true_w) < 0.05 and abs(b.numpy() - true_b) < 0.05
