"""Seeds 000/001/004, "custom training loop": an MLP classifier trained with GradientTape.

MNIST is replaced by generated 8x8 "digits" (ten noisy prototype images), so nothing is
downloaded. Dense, Flatten, Adam, SparseCategoricalCrossentropy(from_logits=True),
gradient clipping and a ``@tf.function`` step, with ``import s2s_ad.tf as tf``.
"""

import numpy as np

import s2s_ad.tf as tf

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
