"""An inner ``GradientTape`` opened by a helper that an outer tape's block calls: a
WGAN-GP model whose ``gradient_penalty`` method takes the critic's input gradient, a
plain penalty function, a helper returning the inner gradient itself, helpers that
differentiate with respect to a model's Variables (a gradient-norm regularizer), and a
critic with dropout.

The literals were recorded from runs of the same programs with TensorFlow 2.21 and
tf_keras (``TF_USE_LEGACY_KERAS=1``), with the same weights and data (set explicitly);
the float64 programs are also checked against central finite differences.
"""

import numpy as np
import pytest
from fd import numerical_grad
from tf_weights import leaky_critic as _critic
from tf_weights import sin_weights as _w

import s2s_ad.tf as tf
from s2s_ad.tf import keras

layers = keras.layers


def _generator():
    generator = keras.Sequential(
        [layers.Dense(8), layers.LeakyReLU(0.2), layers.Dense(3, activation="tanh")]
    )
    generator(np.zeros((1, 2), np.float32))
    generator.set_weights([_w(w.shape, k, 0.6) for k, w in enumerate(generator.get_weights())])
    return generator


class WGAN(keras.Model):
    def __init__(self, critic, generator, gp_weight=10.0):
        super().__init__()
        self.critic = critic
        self.generator = generator
        self.gp_weight = gp_weight

    def gradient_penalty(self, batch_size, real, fake):
        alpha = tf.reshape(tf.linspace(0.1, 0.9, batch_size), [batch_size, 1])
        diff = fake - real
        interpolated = real + alpha * diff
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(interpolated)
            pred = self.critic(interpolated, training=True)
        grads = gp_tape.gradient(pred, [interpolated])[0]
        norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1]))
        return tf.reduce_mean((norm - 1.0) ** 2)

    def train_critic(self, real, z):
        batch_size = real.shape[0]
        with tf.GradientTape() as tape:
            fake = self.generator(z, training=True)
            fake_logits = self.critic(fake, training=True)
            real_logits = self.critic(real, training=True)
            d_cost = tf.reduce_mean(fake_logits) - tf.reduce_mean(real_logits)
            gp = self.gradient_penalty(batch_size, real, fake)
            d_loss = d_cost + gp * self.gp_weight
        d_grads = tape.gradient(d_loss, self.critic.trainable_variables)
        self.d_opt.apply_gradients(zip(d_grads, self.critic.trainable_variables))
        return d_loss, gp


def test_a_wgan_gp_models_penalty_method_opens_its_own_tape():
    wgan = WGAN(_critic(), _generator())
    wgan.d_opt = keras.optimizers.Adam(1e-3, beta_1=0.5, beta_2=0.9)
    real = _w((6, 3), 5.0, 0.6)
    seen = []
    for step in range(3):
        d_loss, gp = wgan.train_critic(real, _w((6, 2), 30.0 + step, 0.6))
        seen.append((float(d_loss), float(gp)))
    tf_losses = [
        (4.437501430511475, 0.41883018612861633),
        (4.365968704223633, 0.4108617305755615),
        (4.306937217712402, 0.4042865037918091),
    ]
    np.testing.assert_allclose(seen, tf_losses, rtol=2e-6)
    weights = wgan.critic.trainable_variables
    tf_kernel = [0.5447728037834167, 0.35217759013175964, -0.4114750027656555]
    np.testing.assert_allclose(weights[0].numpy().ravel()[:3], tf_kernel, atol=2e-6)
    np.testing.assert_allclose(weights[-1].numpy(), [-0.07941100001335144], atol=2e-6)


def penalty(critic, x):
    with tf.GradientTape() as t:
        t.watch(x)
        score = critic(x)
    g = t.gradient(score, x)
    return tf.reduce_mean(tf.square(tf.norm(g, axis=1) - 1.0))


def input_gradient(model, x):
    with tf.GradientTape() as t:
        t.watch(x)
        y = model(x)
    return t.gradient(y, x)


def test_a_penalty_function_and_a_helper_returning_the_inner_gradient():
    critic = _critic()
    x = tf.constant(_w((5, 3), 2.0, 0.7))
    with tf.GradientTape() as tape:
        score = tf.reduce_mean(critic(x))
        gp = penalty(critic, x)
        loss = score + 10.0 * gp
    grads = tape.gradient(loss, critic.trainable_variables)
    assert float(loss) == pytest.approx(4.051941394805908, rel=1e-6)
    tf_first = [
        [1.613380789756775, -2.0274126529693604, 0.35347700119018555, 3.2169272899627686],
        [-0.6992318034172058, 1.7344187498092651, -0.26688429713249207, -1.1774327754974365],
        [1.1209203004837036, -0.7101731896400452, -1.6945722103118896, -0.3099820911884308],
        [-1.5567398071289062, -0.029020000249147415, 2.0071802139282227, 0.06911119818687439],
        [1.123908519744873, -1.4200359582901, -2.2323741912841797, 0.5668314099311829],
        [1.0],
    ]
    for g, want in zip(grads, tf_first):
        np.testing.assert_allclose(g.numpy().ravel()[:4], want, rtol=2e-5, atol=2e-6)

    with tf.GradientTape() as tape:
        gi = input_gradient(critic, x)
        loss = tf.reduce_sum(gi**2)
    grads = tape.gradient(loss, critic.trainable_variables)
    assert float(loss) == pytest.approx(1.008278489112854, rel=1e-6)
    tf_first = [
        [-0.7037904858589172, 0.7966827154159546, -0.15700440108776093, -1.435042381286621],
        [0.1460413932800293, -0.46824678778648376, 0.09415210038423538, 0.33513540029525757],
        [-0.6280165910720825, 0.3032056987285614, 0.9376454949378967, 0.1415729969739914],
        [0.5449705719947815, 0.028772899881005287, -0.6164699792861938, -0.021951399743556976],
        [-0.8094050288200378, 0.1975840926170349, 1.1390409469604492, 0.17326989769935608],
    ]
    for g, want in zip(grads, tf_first):
        np.testing.assert_allclose(g.numpy().ravel()[:4], want, rtol=2e-5, atol=2e-6)
    # TensorFlow gives None for the last bias (the input gradient does not depend on
    # it); the tape gives zeros there (see docs/tensorflow.md)
    assert grads[-1] is None or not np.any(grads[-1].numpy())


class Critic(tf.Module):
    """A critic in float64, for finite differences."""

    def __init__(self, rng):
        super().__init__()
        self.w1 = tf.Variable(rng.standard_normal((3, 5)))
        self.b1 = tf.Variable(rng.standard_normal(5) * 0.1)
        self.w2 = tf.Variable(rng.standard_normal((5, 1)))

    def __call__(self, x):
        return tf.tanh(x @ self.w1 + self.b1) @ self.w2


def _objective(critic, x, real):
    return tf.reduce_mean(critic(x)) - tf.reduce_mean(critic(real)) + 10.0 * penalty(critic, x)


def test_the_penalty_of_a_module_critic_agrees_with_finite_differences():
    rng = np.random.default_rng(4)
    critic = Critic(rng)
    x = tf.constant(rng.standard_normal((6, 3)))
    real = tf.constant(rng.standard_normal((6, 3)))
    with tf.GradientTape() as tape:
        loss = _objective(critic, x, real)
    grads = tape.gradient(loss, [critic.w1, critic.b1, critic.w2])
    for variable, g in zip([critic.w1, critic.b1, critic.w2], grads):
        start = variable.numpy()

        def at(value, variable=variable):
            variable.assign(value)
            return float(_objective(critic, x, real))

        want = numerical_grad(at, [start])
        variable.assign(start)
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-6, atol=1e-8)


mse = keras.losses.MeanSquaredError()


def weight_gradients(model, x, y):
    with tf.GradientTape() as t:
        loss = mse(y, model(x))
    return t.gradient(loss, model.trainable_variables)


def gradient_norm(model, x, y):
    with tf.GradientTape() as t:
        pred = model(x)
        loss = mse(y, pred)
    grads = t.gradient(loss, model.trainable_variables)
    return tf.add_n([tf.reduce_sum(g**2) for g in grads]), loss


def test_helpers_that_differentiate_with_respect_to_a_models_variables():
    model = keras.Sequential([layers.Dense(6, activation="tanh"), layers.Dense(2)])
    model(np.zeros((1, 3), np.float32))
    model.set_weights([_w(w.shape, 10 + k, 0.6) for k, w in enumerate(model.get_weights())])
    x = tf.constant(_w((5, 3), 2.0, 0.7))
    y = tf.constant(_w((5, 2), 3.0, 0.7))
    with tf.GradientTape() as tape:
        norm, loss = gradient_norm(model, x, y)
        total = loss + 0.5 * norm
    grads = tape.gradient(total, model.trainable_variables)
    assert float(total) == pytest.approx(0.7200583219528198, rel=1e-6)
    tf_first = [
        [-0.06042100116610527, 0.08181600272655487, -0.08822999894618988, 0.0458809994161129],
        [0.13154299557209015, 0.07664100080728531, -0.2926909923553467, 0.6806859970092773],
        [-0.7747139930725098, -0.8063079714775085, -0.27297499775886536, -0.35364800691604614],
        [1.1085489988327026, 1.4761450290679932],
    ]
    for g, want in zip(grads, tf_first):
        np.testing.assert_allclose(g.numpy().ravel()[:4], want, rtol=2e-5, atol=2e-6)

    with tf.GradientTape() as tape:
        gs = weight_gradients(model, x, y)
        total = tf.reduce_sum(gs[0] ** 2) + tf.reduce_sum(tf.abs(gs[1]))
    grads = tape.gradient(total, model.trainable_variables)
    assert float(total) == pytest.approx(0.7349910140037537, rel=1e-6)
    tf_first = [
        [-0.00812899973243475, 0.014706999994814396, 0.0038219999987632036, -0.2236340045928955],
        [-0.025679999962449074, 0.484156996011734, -0.791903018951416, 0.8375239968299866],
        [-0.762457013130188, -0.15247100591659546, 0.10735099762678146, 0.32311099767684937],
        [1.63919997215271, 0.9909499883651733],
    ]
    for g, want in zip(grads, tf_first):
        np.testing.assert_allclose(g.numpy().ravel()[:4], want, rtol=2e-5, atol=2e-6)


class DropoutCritic(keras.Model):
    def __init__(self):
        super().__init__()
        self.d1 = layers.Dense(8)
        self.drop = layers.Dropout(0.3)
        self.d2 = layers.Dense(1)

    def call(self, x, training=False):
        return self.d2(self.drop(tf.nn.leaky_relu(self.d1(x), 0.2), training=training))


def dropout_penalty(critic, x):
    with tf.GradientTape() as t:
        t.watch(x)
        score = critic(x, training=True)
    g = t.gradient(score, x)
    return tf.reduce_mean(tf.square(tf.norm(g, axis=1) - 1.0))


def test_a_critic_with_dropout_uses_the_masks_its_inner_block_drew():
    critic = DropoutCritic()
    critic(np.zeros((1, 3), np.float32))
    critic.set_weights([_w(w.shape, 20 + k, 0.6) for k, w in enumerate(critic.get_weights())])
    x = tf.constant(_w((5, 3), 2.0, 0.7))
    real = tf.constant(_w((5, 3), 4.0, 0.7))
    tf.random.set_seed(3)
    with tf.GradientTape() as tape:
        s_real = tf.reduce_mean(critic(real, training=True))
        gp = dropout_penalty(critic, x)
        s_x = tf.reduce_mean(critic(x, training=True))
        loss = s_x - s_real + 10.0 * gp
    helper = tape.gradient(loss, critic.trainable_variables)
    # the same draws, the inner block written in the outer block (supported before)
    tf.random.set_seed(3)
    with tf.GradientTape() as tape:
        s_real = tf.reduce_mean(critic(real, training=True))
        with tf.GradientTape() as t:
            t.watch(x)
            score = critic(x, training=True)
        g = t.gradient(score, x)
        gp = tf.reduce_mean(tf.square(tf.norm(g, axis=1) - 1.0))
        s_x = tf.reduce_mean(critic(x, training=True))
        inline_loss = s_x - s_real + 10.0 * gp
    inline = tape.gradient(inline_loss, critic.trainable_variables)
    assert float(loss) == float(inline_loss)
    for a, b in zip(helper, inline):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    assert np.any(helper[0].numpy())


_CONSTANT = tf.constant(np.ones(3))


@tf.function
def input_and_weight_gradients(w, v, x):
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = tf.reduce_sum(tf.sin(w * x) * v)
    gx = t.gradient(y, x)
    gw, unwatched = t.gradient(y, [w, _CONSTANT])
    assert unwatched is None
    return tf.reduce_sum(gx**2) + tf.reduce_sum(gw * x)


def _two_gradients_numpy(w, v, x):
    gx = np.cos(w * x) * w * v
    gw = np.cos(w * x) * x * v
    return float(np.sum(gx**2) + np.sum(gw * x))


def test_a_decorated_helper_with_a_persistent_inner_tape_and_two_gradients():
    w = tf.Variable(np.array([0.3, -0.7, 1.1]))
    v = tf.Variable(np.array([0.5, 0.2, -0.4]))
    x = tf.constant(np.array([0.4, 1.0, -0.6]))
    with tf.GradientTape() as tape:
        out = input_and_weight_gradients(w, v, x)
    grads = tape.gradient(out, [w, v])
    args = [w.numpy(), v.numpy(), x.numpy()]
    assert float(out) == pytest.approx(_two_gradients_numpy(*args), rel=1e-12)
    want = numerical_grad(_two_gradients_numpy, args, (0, 1))
    for got, expected in zip(grads, want):
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-7, atol=1e-9)


def _make_scaled_helper(scale):
    def helper(w, x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.sin(w * x)) * scale
        if scale > 0.0:
            g = t.gradient(y, x)
        else:
            g = tf.zeros_like(x)
        return tf.reduce_sum(g**2) + y

    return helper


def test_a_closure_helper_taking_its_inner_gradient_in_a_branch():
    w = tf.Variable(np.array([0.3, -0.7, 1.1]))
    x = tf.constant(np.array([0.4, 1.0, -0.6]))
    helper = _make_scaled_helper(2.0)
    with tf.GradientTape() as tape:
        out = helper(w, x)
    got = tape.gradient(out, w)

    def reference(a):
        return float(np.sum((2.0 * np.cos(a * x.numpy()) * a) ** 2 + 2.0 * np.sin(a * x.numpy())))

    assert float(out) == pytest.approx(reference(w.numpy()), rel=1e-12)
    np.testing.assert_allclose(got.numpy(), numerical_grad(reference, [w.numpy()]), rtol=1e-7)


class FittedWGAN(keras.Model):
    """A WGAN-GP trained by ``fit``: extra critic steps, the penalty a method."""

    def __init__(self, discriminator, generator, latent_dim, d_steps=2, gp_weight=10.0):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.latent_dim = latent_dim
        self.d_steps = d_steps
        self.gp_weight = gp_weight
        self.draws = 0

    def compile(self, d_optimizer, g_optimizer, d_loss_fn, g_loss_fn):
        super().compile(run_eagerly=True)
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.d_loss_fn = d_loss_fn
        self.g_loss_fn = g_loss_fn

    def noise(self, batch_size):
        """Latent vectors (deterministic: the same in the TensorFlow run)."""
        self.draws += 1
        return _w((batch_size, self.latent_dim), 100.0 + self.draws, 1.0)

    def gradient_penalty(self, batch_size, real_images, fake_images):
        alpha = tf.reshape(tf.linspace(0.2, 0.8, batch_size), [batch_size, 1])
        interpolated = real_images + alpha * (fake_images - real_images)
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(interpolated)
            pred = self.discriminator(interpolated, training=True)
        grads = gp_tape.gradient(pred, [interpolated])[0]
        norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1]))
        return tf.reduce_mean((norm - 1.0) ** 2)

    def train_step(self, real_images):
        if isinstance(real_images, tuple):
            real_images = real_images[0]
        batch_size = tf.shape(real_images)[0]
        for _ in range(self.d_steps):
            latent = self.noise(batch_size)
            with tf.GradientTape() as tape:
                fake_images = self.generator(latent, training=True)
                fake_logits = self.discriminator(fake_images, training=True)
                real_logits = self.discriminator(real_images, training=True)
                d_cost = self.d_loss_fn(real_img=real_logits, fake_img=fake_logits)
                gp = self.gradient_penalty(batch_size, real_images, fake_images)
                d_loss = d_cost + gp * self.gp_weight
            d_gradient = tape.gradient(d_loss, self.discriminator.trainable_variables)
            self.d_optimizer.apply_gradients(
                zip(d_gradient, self.discriminator.trainable_variables)
            )
        latent = self.noise(batch_size)
        with tf.GradientTape() as tape:
            generated = self.generator(latent, training=True)
            g_loss = self.g_loss_fn(self.discriminator(generated, training=True))
        g_gradient = tape.gradient(g_loss, self.generator.trainable_variables)
        self.g_optimizer.apply_gradients(zip(g_gradient, self.generator.trainable_variables))
        return {"d_loss": d_loss, "g_loss": g_loss}


def critic_loss(real_img, fake_img):
    return tf.reduce_mean(fake_img) - tf.reduce_mean(real_img)


def generator_loss(fake_img):
    return -tf.reduce_mean(fake_img)


def test_a_wgan_gp_trained_by_fit_without_targets():
    d = keras.Sequential(
        [layers.Dense(16), layers.LeakyReLU(0.2), layers.Dense(8), layers.LeakyReLU(0.2)]
        + [layers.Dense(1)]
    )
    g = keras.Sequential([layers.Dense(16), layers.LeakyReLU(0.2), layers.Dense(4, "tanh")])
    d(np.zeros((1, 4), np.float32))
    g(np.zeros((1, 3), np.float32))
    d.set_weights([_w(w.shape, 10 + k, 0.5) for k, w in enumerate(d.get_weights())])
    g.set_weights([_w(w.shape, 30 + k, 0.5) for k, w in enumerate(g.get_weights())])
    wgan = FittedWGAN(d, g, latent_dim=3)
    wgan.compile(
        d_optimizer=keras.optimizers.Adam(0.0002, beta_1=0.5, beta_2=0.9),
        g_optimizer=keras.optimizers.Adam(0.0002, beta_1=0.5, beta_2=0.9),
        d_loss_fn=critic_loss,
        g_loss_fn=generator_loss,
    )
    real = _w((16, 4), 7.0, 0.9)
    history = wgan.fit(real, batch_size=8, epochs=2, verbose=0, shuffle=False)
    np.testing.assert_allclose(history.history["d_loss"], [5.250261, 5.064761], atol=3e-6)
    np.testing.assert_allclose(history.history["g_loss"], [-1.41712, -1.411645], atol=2e-6)
    tf_d = [-0.2702690064907074, -0.46367499232292175, 0.08463600277900696, 0.4980629980564]
    tf_g = [-0.4945169985294342, -0.023049000650644302, 0.4846870005130768, 0.2156540006399]
    np.testing.assert_allclose(d.get_weights()[0].ravel()[:4], tf_d, atol=2e-6)
    np.testing.assert_allclose(g.get_weights()[0].ravel()[:4], tf_g, atol=2e-6)
