"""Seeds 000 and 001: training patterns around GradientTape, with ``import s2s_ad.tf as tf``.

An MNIST-style classifier (generated 28x28 images instead of the download), gradient
clipping, gradient accumulation over micro-batches and per-layer learning rates.
"""

import numpy as np

import s2s_ad.tf as tf

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
    loss = loss_fn(y_test, model(x_test))
backbone_grads = tape.gradient(loss, backbone_vars)
head_grads = tape.gradient(loss, head_vars)
optimizer_backbone.apply_gradients(zip(backbone_grads, backbone_vars))
optimizer_head.apply_gradients(zip(head_grads, head_vars))
print("per-layer learning rates applied:", [g.shape for g in head_grads])
