"""Seed 000 (Automatic Differentiation, custom training loops) with
``import s2s_ad.tf as tf``: the examples, printing their numbers. The dataset is generated
8x8 "digits" (nothing is downloaded)."""

import numpy as np

import s2s_ad.tf as tf

x = tf.Variable(3.0)
with tf.GradientTape() as tape:
    y = x**2  # Forward pass recorded on the tape
dy_dx = tape.gradient(y, x)  # dy/dx = 2x = 6.0
print(dy_dx)
assert dy_dx.numpy() == 6.0

x = tf.constant(3.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = x**2
dy_dx = tape.gradient(y, x)
print(dy_dx)
assert dy_dx.numpy() == 6.0

x = tf.Variable(3.0)
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        y = x**3
    dy_dx = inner.gradient(y, x)  # First derivative: 3x²
d2y_dx2 = outer.gradient(dy_dx, x)  # Second derivative: 6x
print(dy_dx, d2y_dx2)
assert (dy_dx.numpy(), d2y_dx2.numpy()) == (27.0, 18.0)

# --- The Standard Pattern (with gradient clipping) ---------------------------------------

rng = np.random.default_rng(0)
prototypes = rng.uniform(0.0, 1.0, (10, 8, 8))


def make_digits(n):
    labels = rng.integers(0, 10, n)
    images = prototypes[labels] + 0.35 * rng.standard_normal((n, 8, 8))
    return images.astype(np.float32), labels


x_train, y_train = make_digits(2000)
x_test, y_test = make_digits(500)
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(2000).batch(64)


class SimpleNN(tf.Module):
    def __init__(self):
        super().__init__()
        self.flatten = tf.keras.layers.Flatten()
        self.dense1 = tf.keras.layers.Dense(64, activation="relu")
        self.dense2 = tf.keras.layers.Dense(10)

    def __call__(self, x, training=False):
        x = self.flatten(x)
        x = self.dense1(x)
        return self.dense2(x)


model = SimpleNN()
model(x_train[:1])  # build the layers
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-2)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def train_step(x_batch, y_batch):
    with tf.GradientTape() as tape:
        predictions = model(x_batch, training=True)
        loss = loss_fn(y_batch, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    gradients, _ = tf.clip_by_global_norm(gradients, 5.0)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


for epoch in range(5):
    total = 0.0
    for x_batch, y_batch in train_dataset:
        total += float(train_step(x_batch, y_batch))
    print(f"epoch {epoch}: loss {total / 32:.4f}")

accuracy = np.mean(np.argmax(np.asarray(model(x_test)), axis=1) == y_test)
print(f"test accuracy: {accuracy:.3f}")
assert accuracy >= 0.9

# --- Gradient accumulation and per-layer learning rates ----------------------------------
x_train = x_train[:, :, :]
y_train = np.asarray(tf.one_hot(y_train, 10))
loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
# Gradient accumulation (simulates larger batch sizes with limited memory)
num_micro_batches = 4
micro_batches = np.split(x_train[:64], num_micro_batches)
micro_labels = np.split(np.asarray(y_train)[:64], num_micro_batches)
accumulated_gradients = [tf.Variable(tf.zeros_like(v)) for v in model.trainable_variables]
for micro_batch, labels in zip(micro_batches, micro_labels):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(micro_batch)) / num_micro_batches
    grads = tape.gradient(loss, model.trainable_variables)
    for acc_grad, grad in zip(accumulated_gradients, grads):
        acc_grad.assign_add(grad)
with tf.GradientTape() as tape:
    full = loss_fn(np.asarray(y_train)[:64], model(x_train[:64]))
full_grads = tape.gradient(full, model.trainable_variables)
for acc_grad, grad in zip(accumulated_gradients, full_grads):
    assert np.allclose(acc_grad.numpy(), grad.numpy(), atol=1e-5)
optimizer.apply_gradients(zip(accumulated_gradients, model.trainable_variables))
print("accumulated gradients equal the full-batch gradients")

# Custom per-layer learning rates
optimizer_backbone = tf.keras.optimizers.Adam(1e-5)
optimizer_head = tf.keras.optimizers.Adam(1e-3)
backbone_vars = model.dense1.trainable_variables
head_vars = model.dense2.trainable_variables
with tf.GradientTape(persistent=True) as tape:
    loss = loss_fn(np.asarray(tf.one_hot(y_test, 10)), model(x_test))
backbone_grads = tape.gradient(loss, backbone_vars)
head_grads = tape.gradient(loss, head_vars)
optimizer_backbone.apply_gradients(zip(backbone_grads, backbone_vars))
optimizer_head.apply_gradients(zip(head_grads, head_vars))
print("per-layer learning rates applied:", [g.shape for g in head_grads])
