"""Seed 001 (TensorFlow GradientTape tutorial) with ``import s2s_ad.tf as tf``: every
example, printing what the tutorial prints. MNIST is replaced by generated 28x28 images
(nothing is downloaded)."""

import numpy as np

import s2s_ad.tf as tf

# Create variables
x = tf.Variable(3.0)
# Record operations with GradientTape
with tf.GradientTape() as tape:
    y = x * x
# Calculate the gradient dy/dx
dy_dx = tape.gradient(y, x)
print(f"dy/dx at x = 3.0: {dy_dx.numpy()}")
assert dy_dx.numpy() == 6.0

x = tf.Variable(2.0)
y = tf.Variable(3.0)
with tf.GradientTape() as tape:
    f = x * x * y + y * y
# Get gradients df/dx and df/dy
gradients = tape.gradient(f, [x, y])
print(f"df/dx: {gradients[0].numpy()}")
print(f"df/dy: {gradients[1].numpy()}")
assert (gradients[0].numpy(), gradients[1].numpy()) == (12.0, 10.0)

x = tf.Variable(3.0)
with tf.GradientTape() as tape:
    y = x * x
    z = x * x * x
# First gradient computation works
dy_dx = tape.gradient(y, x)
print(f"dy/dx: {dy_dx.numpy()}")
# This will raise an error
try:
    dz_dx = tape.gradient(z, x)
except RuntimeError as e:
    print(f"Error: {e}")

x = tf.Variable(3.0)
with tf.GradientTape(persistent=True) as tape:
    y = x * x
    z = x * x * x
dy_dx = tape.gradient(y, x)
dz_dx = tape.gradient(z, x)
print(f"dy/dx: {dy_dx.numpy()}")
print(f"dz/dx: {dz_dx.numpy()}")
assert (dy_dx.numpy(), dz_dx.numpy()) == (6.0, 27.0)
# Don't forget to delete the tape when done
del tape

x = tf.constant(3.0)  # Not a Variable
with tf.GradientTape() as tape:
    tape.watch(x)  # Explicitly watch the tensor
    y = x * x
dy_dx = tape.gradient(y, x)
print(f"dy/dx: {dy_dx.numpy()}")

x = tf.Variable(1.0)
with tf.GradientTape() as tape_2:
    with tf.GradientTape() as tape_1:
        y = x * x * x
    # First derivative: dy/dx
    dy_dx = tape_1.gradient(y, x)
# Second derivative: d²y/dx²
d2y_dx2 = tape_2.gradient(dy_dx, x)
print(f"dy/dx: {dy_dx.numpy()}")
print(f"d²y/dx²: {d2y_dx2.numpy()}")
assert (dy_dx.numpy(), d2y_dx2.numpy()) == (3.0, 6.0)

# --- Building a Custom Training Loop -----------------------------------------------------

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

# --- Controlling Gradient Recording ------------------------------------------------------
x = tf.Variable(2.0)
y = tf.Variable(3.0)
with tf.GradientTape(persistent=True) as tape:
    # f will be treated as a constant for gradient computation
    f = tf.stop_gradient(x * y)
    g = x * f
dg_dx = tape.gradient(g, x)
dg_dy = tape.gradient(g, y)
print(f"dg/dx: {dg_dx.numpy()}")  # Equal to f (or x*y)
print(f"dg/dy: {dg_dy}")  # None (y only appears in stop_gradient)
assert dg_dx.numpy() == 6.0 and dg_dy is None

# --- Practical Example: Training a Neural Network ----------------------------------------

rng = np.random.default_rng(1)
prototypes = rng.uniform(0.0, 255.0, (10, 28, 28))


def load_data(n):
    labels = rng.integers(0, 10, n)
    images = np.clip(prototypes[labels] + 60.0 * rng.standard_normal((n, 28, 28)), 0, 255)
    return images.astype(np.float32), labels


(x_train, y_train), (x_test, y_test) = load_data(1024), load_data(256)
x_train, x_test = x_train / 255.0, x_test / 255.0  # Normalize
y_train = tf.one_hot(y_train, 10)
y_test = tf.one_hot(y_test, 10)
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train))
train_dataset = train_dataset.shuffle(10000).batch(64)


class SimpleNN(tf.Module):
    def __init__(self):
        super(SimpleNN, self).__init__()  # noqa: UP008 (as the seed writes it)
        self.flatten = tf.keras.layers.Flatten()
        self.dense1 = tf.keras.layers.Dense(128, activation="relu")
        self.dense2 = tf.keras.layers.Dense(10)

    def __call__(self, x):
        x = self.flatten(x)
        x = self.dense1(x)
        return self.dense2(x)


model = SimpleNN()
model(x_train[:1])
optimizer = tf.keras.optimizers.Adam(learning_rate=0.001)
loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        predictions = model(images)
        loss = loss_fn(labels, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    gradients, _ = tf.clip_by_global_norm(gradients, clip_norm=1.0)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


for epoch in range(3):
    total_loss = 0
    for images, labels in train_dataset:
        total_loss += train_step(images, labels)
    print(f"Epoch {epoch + 1}, Loss: {total_loss.numpy() / 16:.4f}")

predictions = model(x_test)
predicted_classes = tf.argmax(predictions, axis=1)
true_classes = tf.argmax(y_test, axis=1)
accuracy = tf.reduce_mean(tf.cast(tf.equal(predicted_classes, true_classes), tf.float32))
print(f"Test accuracy: {accuracy.numpy():.4f}")
assert accuracy.numpy() >= 0.9
