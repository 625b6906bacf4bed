"""Classes built in the loss whose ``__init__`` does more than store its arguments.

Users build model objects inside the function they differentiate: a GRU cell whose
``__init__`` unpacks a tuple, a layer with a derived ``n_out`` and an activation
default, a model whose ``__init__`` calls ``super().__init__()`` and appends its layers
in a loop, an RNN cell that checks its shapes and computes a scale, an MLP holding
``[(W, b), ...]``, a likelihood object with a ``scipy.stats`` log-density, a subclass
calling its base's ``__init__``, a dataclass with a ``__post_init__``. The construction
is inlined (s2s_ad/norm_init.py): each gradient is checked against finite differences
in reverse and forward mode and at second order, and against autograd on a functional
twin. What cannot be inlined is refused with the reason and the user's line.
"""

from __future__ import annotations

import dataclasses

import autograd
import autograd.numpy as anp
import autograd.scipy.stats as astats
import numpy as np
import pytest
from scipy.stats import norm

import s2s_ad
import s2s_ad.tf as tf
from s2s_ad import TransformError
from tests.built_classes_models import ScaledDense
from tests.fd import numerical_grad

RS = np.random.RandomState(11)


def _close(got, want, tol=1e-6):
    """Nested lists and tuples of arrays equal within ``tol``."""
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, tol)
        return
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


def _hvp_check(fun, args, wrt=0):
    """The Hessian-vector product (forward over reverse) along ``args[wrt]`` against
    differences of the generated gradient."""
    x = args[wrt]
    v = np.linspace(0.3, 1.1, np.size(x)).reshape(np.shape(x))

    def along(y):
        return fun(*args[:wrt], y, *args[wrt + 1 :])

    dg = s2s_ad.grad(along)
    eps = 1e-5
    want = (np.asarray(dg(x + eps * v)) - np.asarray(dg(x - eps * v))) / (2 * eps)
    _close(s2s_ad.hvp(along)(x, v), want, 1e-4)


# --- the three programs of the report ---------------------------------------------------


class GRU:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __call__(self, h, x):
        z = 1 / (1 + np.exp(-(self.a @ x)))
        return z * h + (1 - z) * np.tanh(self.b @ x)


def loss_gru(a, b, xs):
    cell = GRU(a, b)
    h = np.zeros(3)
    for x in xs:
        h = cell(h, x)
    return np.sum(h**2)


def gru_twin(a, b, xs):
    h = anp.zeros(3)
    for x in xs:
        z = 1 / (1 + anp.exp(-(a @ x)))
        h = z * h + (1 - z) * anp.tanh(b @ x)
    return anp.sum(h**2)


class Lin:
    def __init__(self, W, b, act=np.tanh):
        self.W = W
        self.b = b
        self.n_out = W.shape[1]
        self.act = act

    def __call__(self, x):
        assert x.shape[-1] == self.W.shape[0]
        return self.act(x @ self.W + self.b)


def loss_lin(params, x):
    layers = [Lin(W, b) for W, b in params[:-1]] + [Lin(*params[-1], act=lambda u: u)]
    for layer in layers:
        x = layer(x)
    return np.mean(x**2) + 0.0 * layers[-1].n_out


def lin_twin(params, x):
    for W, b in params[:-1]:
        x = anp.tanh(x @ W + b)
    W, b = params[-1]
    return anp.mean((x @ W + b) ** 2)


class Base:
    def __init__(self):
        self.training = False


class Model(Base):
    def __init__(self, params):
        super().__init__()
        self.layers = []
        for W, b in params:
            self.layers.append((W, b))

    def forward(self, x):
        for W, b in self.layers:
            x = np.tanh(x @ W + b)
        return x


def loss_model(params, x):
    return np.sum(Model(params).forward(x) ** 2)


def model_twin(params, x):
    for W, b in params:
        x = anp.tanh(x @ W + b)
    return anp.sum(x**2)


def _mlp(sizes=(2, 4, 3)):
    return [(RS.randn(m, n) * 0.7, RS.randn(n) * 0.1) for m, n in zip(sizes, sizes[1:])]


def test_gru_whose_init_assigns_a_tuple():
    a, b, xs = RS.randn(3, 2), RS.randn(3, 2), RS.randn(4, 2)
    s2s_ad.check_grads(loss_gru, (a, b, xs), modes=("rev", "fwd"), order=2)
    want = autograd.grad(gru_twin, (0, 1))(a, b, xs)
    _close(s2s_ad.grad(loss_gru, wrt=(0, 1))(a, b, xs), want)


def test_layers_with_a_derived_attribute_a_default_and_a_star_argument():
    params, x = _mlp(), RS.randn(5, 2)
    s2s_ad.check_grads(loss_lin, (params, x), modes=("rev", "fwd"), order=2)
    _close(s2s_ad.grad(loss_lin)(params, x), autograd.grad(lin_twin)(params, x))


def test_model_calling_super_init_and_appending_its_layers():
    params, x = _mlp(), RS.randn(5, 2)
    s2s_ad.check_grads(loss_model, (params, x), modes=("rev", "fwd"))
    _close(s2s_ad.grad(loss_model)(params, x), autograd.grad(model_twin)(params, x))

    def first_kernel(W):
        return loss_model([(W, params[0][1]), params[1]], x)

    _hvp_check(first_kernel, (params[0][0],))


def test_the_built_object_is_an_instance_holding_its_fields():
    def loss(params, x):
        model = Model(params)
        return np.sum(model.forward(x)), model

    params, x = _mlp(), RS.randn(5, 2)
    _, model = s2s_ad.grad(loss, has_aux=True)(params, x)
    assert type(model) is Model and isinstance(model, Base)
    assert model.training is False and len(model.layers) == 2
    assert model.layers[0][0] is params[0][0]


# --- more of what users write in __init__ -----------------------------------------------


class RNNCell:
    """An Elman cell: checks its shapes, converts its input weights, scales its state."""

    def __init__(self, Wx, Wh, b, scale=None):
        if Wx.ndim != 2 or Wh.shape[0] != Wh.shape[1]:
            raise ValueError(f"bad shapes {Wx.shape} {Wh.shape}")
        self.Wx = np.asarray(Wx, dtype=float)
        self.Wh = Wh
        self.b = b
        self.hidden = Wh.shape[0]
        self.scale = 1.0 / np.sqrt(self.hidden) if scale is None else scale

    def initial(self):
        return np.zeros(self.hidden)

    def step(self, h, x):
        return np.tanh(self.scale * (h @ self.Wh) + x @ self.Wx + self.b)


def rnn_loss(Wx, Wh, b, xs):
    cell = RNNCell(Wx, Wh, b)
    h = cell.initial()
    for x in xs:
        h = cell.step(h, x)
    return np.sum(h**2)


def rnn_twin(Wx, Wh, b, xs):
    h = anp.zeros(Wh.shape[0])
    for x in xs:
        h = anp.tanh((h @ Wh) / anp.sqrt(Wh.shape[0]) + x @ Wx + b)
    return anp.sum(h**2)


def test_rnn_cell_that_checks_shapes_and_computes_a_scale():
    Wx, Wh, b, xs = RS.randn(2, 3), RS.randn(3, 3) * 0.5, RS.randn(3), RS.randn(4, 2)
    s2s_ad.check_grads(rnn_loss, (Wx, Wh, b, xs), modes=("rev", "fwd"), order=2)
    want = autograd.grad(rnn_twin, (0, 1, 2))(Wx, Wh, b, xs)
    _close(s2s_ad.grad(rnn_loss, wrt=(0, 1, 2))(Wx, Wh, b, xs), want)


def test_a_failing_check_in_init_raises_as_python_does():
    with pytest.raises(ValueError, match="bad shapes"):
        s2s_ad.grad(rnn_loss)(RS.randn(2, 3), RS.randn(3, 2), RS.randn(3), RS.randn(4, 2))


class MLP:
    """A multi-layer perceptron holding ``[(W, b), ...]`` and its settings."""

    def __init__(self, params, act=np.tanh, l2=1e-2):
        self.params = [(np.asarray(W), b) for W, b in params]
        self.depth = len(params)
        self.act = act
        self.cfg = dict(l2=l2, depth=self.depth)

    def __call__(self, x):
        for k, (W, b) in enumerate(self.params):
            x = x @ W + b
            if k < self.depth - 1:
                x = self.act(x)
        return x

    def penalty(self):
        return self.cfg["l2"] * sum(np.sum(W**2) for W, _ in self.params)


def mlp_loss(params, x, y):
    net = MLP(params)
    return np.mean((net(x) - y) ** 2) + net.penalty()


def mlp_twin(params, x, y):
    out = x
    for k, (W, b) in enumerate(params):
        out = out @ W + b
        if k < len(params) - 1:
            out = anp.tanh(out)
    return anp.mean((out - y) ** 2) + 1e-2 * sum(anp.sum(W**2) for W, _ in params)


def test_mlp_class_holding_its_layer_list_and_a_config_dict():
    params, x, y = _mlp(), RS.randn(5, 2), RS.randn(5, 3)
    s2s_ad.check_grads(mlp_loss, (params, x, y), modes=("rev", "fwd"))
    _close(s2s_ad.grad(mlp_loss)(params, x, y), autograd.grad(mlp_twin)(params, x, y))

    def first_kernel(W):
        return mlp_loss([(W, params[0][1]), params[1]], x, y)

    _hvp_check(first_kernel, (params[0][0],))


class GaussianLikelihood:
    """A Gaussian observation model built from a mean and a log standard deviation."""

    def __init__(self, mu, log_sigma):
        self.mu = mu
        self.sigma = np.exp(log_sigma)
        self.n_params = np.size(mu) + 1

    def log_likelihood(self, y):
        return np.sum(norm.logpdf(y, self.mu, self.sigma))


def negative_log_likelihood(mu, log_sigma, y):
    return -GaussianLikelihood(mu, log_sigma).log_likelihood(y)


def nll_twin(mu, log_sigma, y):
    return -anp.sum(astats.norm.logpdf(y, mu, anp.exp(log_sigma)))


def test_scipy_stats_likelihood_object_built_in_the_loss():
    mu, log_sigma, y = RS.randn(4), 0.3, RS.randn(4)
    s2s_ad.check_grads(negative_log_likelihood, (mu, log_sigma, y), modes=("rev", "fwd"), order=2)
    want = autograd.grad(nll_twin, (0, 1))(mu, log_sigma, y)
    _close(s2s_ad.grad(negative_log_likelihood, wrt=(0, 1))(mu, log_sigma, y), want)


class Dense:
    def __init__(self, W):
        self.W = W
        self.n_in = W.shape[0]

    def project(self, x):
        return x @ self.W


class BiasedDense(Dense):
    """A subclass adding an attribute, calling its base's ``__init__`` with super()."""

    def __init__(self, W, b):
        super().__init__(W)
        self.b = b

    def __call__(self, x):
        return np.tanh(self.project(x) + self.b)


class ScaledBiased(BiasedDense):
    """Calls its base's ``__init__`` by name, then adjusts an inherited attribute."""

    def __init__(self, W, b, gain):
        BiasedDense.__init__(self, W, b)
        self.b = self.b * gain


def inherited_loss(W, b, x):
    layer = BiasedDense(W, b)
    scaled = ScaledBiased(W, b, 0.5)
    return np.sum(layer(x) ** 2) + np.sum(scaled(x)) * layer.n_in


def inherited_twin(W, b, x):
    return anp.sum(anp.tanh(x @ W + b) ** 2) + anp.sum(anp.tanh(x @ W + 0.5 * b)) * W.shape[0]


def test_subclasses_calling_their_base_init():
    W, b, x = RS.randn(3, 2), RS.randn(2), RS.randn(4, 3)
    s2s_ad.check_grads(inherited_loss, (W, b, x), modes=("rev", "fwd"))
    # the mixed second derivatives go through a method calling another method on self
    # (layer(x) -> self.project(x)): the bound method's object carries W and b
    s2s_ad.check_grads(inherited_loss, (W, b, x), order=2)
    _hvp_check(inherited_loss, (W, b, x), 0)
    _hvp_check(inherited_loss, (W, b, x), 1)
    want = autograd.grad(inherited_twin, (0, 1))(W, b, x)
    _close(s2s_ad.grad(inherited_loss, wrt=(0, 1))(W, b, x), want)


@dataclasses.dataclass
class Direction:
    """A dataclass whose ``__post_init__`` computes a derived field."""

    w: np.ndarray
    scale: float = 2.0
    unit: np.ndarray = dataclasses.field(init=False)
    history: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        self.unit = self.scale * self.w / np.linalg.norm(self.w)
        self.history.append(self.scale)


def direction_loss(w, x):
    d = Direction(w)
    return np.sum(np.sin(d.unit * x)) + len(d.history)


def direction_twin(w, x):
    return anp.sum(anp.sin(2.0 * w / anp.linalg.norm(w) * x))


def test_dataclass_with_a_post_init():
    w, x = RS.randn(4), RS.randn(4)
    s2s_ad.check_grads(direction_loss, (w, x), modes=("rev", "fwd"), order=2)
    _close(s2s_ad.grad(direction_loss)(w, x), autograd.grad(direction_twin)(w, x))


class Regularised:
    """Class attributes, a method called by ``__init__``, a field set on one path only."""

    decay = 0.1
    count = 0

    def __init__(self, W, b=None, extra=None):
        self.W = self._checked(W)
        if b is None:
            self.b = np.zeros(W.shape[1])
        else:
            self.b = b
        if extra is not None:
            self.extra = extra
        self.count += 1
        self._reset()

    def _checked(self, W):
        return np.asarray(W) * (1.0 - self.decay)

    def _reset(self):
        self.params = [self.W, self.b]

    def loss(self, x):
        out = np.sum(np.tanh(x @ self.params[0] + self.params[1]) ** 2)
        if hasattr(self, "extra"):
            out = out + np.sum(self.extra**2)
        return out * self.count


def regularised_loss(W, b, x):
    return Regularised(W, b).loss(x) + Regularised(W, extra=b).loss(x)


def regularised_twin(W, b, x):
    W = 0.9 * W
    return anp.sum(anp.tanh(x @ W + b) ** 2) + anp.sum(anp.tanh(x @ W) ** 2) + anp.sum(b**2)


def test_class_attributes_methods_called_in_init_and_conditional_fields():
    W, b, x = RS.randn(3, 2), RS.randn(2), RS.randn(4, 3)
    s2s_ad.check_grads(regularised_loss, (W, b, x), modes=("rev", "fwd"), order=2)
    want = autograd.grad(regularised_twin, (0, 1))(W, b, x)
    _close(s2s_ad.grad(regularised_loss, wrt=(0, 1))(W, b, x), want)
    assert Regularised.count == 0  # the class attribute is read, not written


def foreign_loss(W, b, x):
    layer = ScaledDense(W, b)
    return np.sum(layer(x) ** 2)


def foreign_twin(W, b, x):
    scale = 0.5 * anp.sqrt(2.0 / (W.shape[0] + W.shape[1]))
    return anp.sum(anp.tanh(scale * (x @ W) + b) ** 2)


def test_a_class_of_another_module_reading_that_modules_names():
    W, b, x = RS.randn(3, 2), RS.randn(2), RS.randn(4, 3)
    s2s_ad.check_grads(foreign_loss, (W, b, x), modes=("rev", "fwd"), order=2)
    want = autograd.grad(foreign_twin, (0, 1))(W, b, x)
    _close(s2s_ad.grad(foreign_loss, wrt=(0, 1))(W, b, x), want)


class Net:
    """A network whose ``__init__`` builds its layer objects (a construction inside one)."""

    def __init__(self, params):
        self.layers = [Lin(W, b) for W, b in params[:-1]]
        self.layers.append(Lin(*params[-1], act=lambda u: u))
        self.n = len(self.layers)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Head(Lin):
    """A subclass without an ``__init__`` of its own."""

    def __call__(self, x):
        return np.sum(super().__call__(x), axis=-1)


def net_loss(params, x):
    net = Net(params)
    head = Head(W=params[0][0], b=params[0][1])
    return np.mean(net(x) ** 2) + np.sum(head(x)) * net.n


def test_layers_built_inside_a_networks_init_and_keyword_arguments():
    params, x = _mlp(), RS.randn(5, 2)
    s2s_ad.check_grads(net_loss, (params, x), modes=("rev", "fwd"))
    _close(s2s_ad.grad(net_loss)(params, x), numerical_grad(net_loss, (params, x)), 1e-5)

    def first_kernel(W):
        return net_loss([(W, params[0][1]), params[1]], x)

    s2s_ad.check_grads(first_kernel, (params[0][0],), modes=("rev", "fwd"), order=2)


class Penalised(BiasedDense):
    """Methods that reach their base's through ``super()`` (zero-argument and explicit)."""

    def __call__(self, x):
        return np.sum(super().__call__(x), axis=-1)

    def project(self, x):
        return 2.0 * super(Penalised, self).project(x)  # noqa: UP008 (the explicit form)


def penalised_loss(W, b, x):
    return np.sum(Penalised(W, b)(x) ** 2)


def penalised_twin(W, b, x):
    return anp.sum(anp.sum(anp.tanh(2.0 * (x @ W) + b), axis=-1) ** 2)


def test_methods_calling_super_differentiate_through_self():
    W, b, x = RS.randn(3, 2), RS.randn(2), RS.randn(4, 3)
    s2s_ad.check_grads(penalised_loss, (W, b, x), modes=("rev", "fwd"))
    s2s_ad.check_grads(lambda W: penalised_loss(W, b, x), (W,), modes=("rev", "fwd"), order=2)
    _hvp_check(penalised_loss, (W, b, x), 1)
    want = autograd.grad(penalised_twin, (0, 1))(W, b, x)
    _close(s2s_ad.grad(penalised_loss, wrt=(0, 1))(W, b, x), want)


def test_a_layer_built_inside_a_gradient_tape_block():
    W0, b0, x = RS.randn(2, 4), RS.randn(4), RS.randn(5, 2)
    W, b = tf.Variable(W0), tf.Variable(b0)
    with tf.GradientTape() as tape:
        layer = RNNCell(W, tf.Variable(np.eye(4) * 0.5), b)
        y = tf.reduce_sum(layer.step(layer.initial(), x) ** 2)
    got = tape.gradient(y, [W, b])

    def twin(W, b):
        return anp.sum(anp.tanh(x @ W + b) ** 2)

    _close([np.asarray(g) for g in got], autograd.grad(twin, (0, 1))(W0, b0))


# --- what is not inlined -----------------------------------------------------------------

REGISTRY = []


class Registered:
    def __init__(self, W):
        self.W = W
        REGISTRY.append(self)

    def __call__(self, x):
        return x @ self.W


def registered_loss(W, x):
    layer = Registered(W)
    return np.sum(layer(x))


def registered_constant(W, x):
    layer = Registered(np.ones((3, 2)))  # built from constants: its own __init__ runs
    return np.sum(layer(x) * W)


class Counted:
    def __init__(self, W):
        global LAST
        LAST = W
        self.W = W


def counted_loss(W, x):
    return np.sum(Counted(W).W * x)


class Table:
    def __init__(self, rows):
        self.rows = rows * 2.0

    def __getitem__(self, k):
        return self.rows[k]


def table_loss(W, x):
    return np.sum(Table(W)[0] * x)


class Early:
    def __init__(self, W, skip=False):
        self.W = W
        if skip:
            return
        self.W = W * 2.0


def early_loss(W, x):
    return np.sum(Early(W).W * x)


@pytest.mark.parametrize(
    ("fun", "reason", "where"),
    [
        (registered_loss, "uses self other than through its attributes", "REGISTRY.append(self)"),
        (counted_loss, "stores into a global variable", "global LAST"),
        (table_loss, "Table defines __getitem__", None),
        (early_loss, "returns before its end", "return"),
    ],
)
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_what_is_not_inlined_is_refused_with_the_reason_and_the_users_line(
    fun, reason, where, mode
):
    W, x = (np.ones((3, 2)), np.ones(2)) if fun is not table_loss else (np.ones(2), np.ones(2))
    with pytest.raises(TransformError) as info:
        if mode == "rev":
            s2s_ad.grad(fun)(W, x)
        else:
            s2s_ad.jvp(lambda W: fun(W, x), (W,), (W,))
    message = str(info.value)
    assert reason in message and "no gradient rule" not in message
    assert "from differentiated values" in message
    assert info.value.filename.endswith("test_built_classes_init.py")
    text = info.value.line_text or ""
    assert fun.__name__ != "registered_loss" or "Registered(W)" in text
    if where is not None:
        assert "test_built_classes_init.py:" in message and where in message


def test_a_class_built_from_constants_still_runs_its_own_init():
    before = len(REGISTRY)
    W, x = RS.randn(3, 2), RS.randn(3)
    _close(s2s_ad.grad(registered_constant)(W, x), numerical_grad(registered_constant, (W, x)))
    assert len(REGISTRY) > before


class PlainDense:
    """Stores its arguments only; its call goes through another of its methods."""

    def __init__(self, W, b):
        self.W = W
        self.b = b

    def project(self, x):
        return x @ self.W

    def __call__(self, x):
        return np.tanh(self.project(x) + self.b)


def plain_dense_loss(W, b, x):
    return np.sum(PlainDense(W, b)(x) ** 2)


def test_mixed_second_derivatives_through_a_method_calling_another_on_self():
    """d/dW of the gradient with respect to x reaches W through ``self.project``: it was
    dropped (the bound method read from ``self`` was not followed)."""
    W, b, x = RS.randn(3, 2), RS.randn(2), RS.randn(4, 3)
    s2s_ad.check_grads(plain_dense_loss, (W, b, x), order=2)
    layer = PlainDense(W, b)

    def by_object(layer, x):
        return np.sum(layer(x) ** 2)

    s2s_ad.check_grads(by_object, (layer, x), order=2)
