"""Writing by index as TensorFlow does: a Variable slice's ``assign``, the Variable's
``scatter_nd_update``/``_add``/``_sub``, and the differentiable ``tf.gather_nd``,
``tf.scatter_nd`` and ``tf.tensor_scatter_nd_update``/``_add``/``_sub``. The expected
gradients are TensorFlow 2.21's (printed by it for the same inputs), and
finite differences check the generated code in both modes."""

import numpy as np
import pytest

import s2s_ad
import s2s_ad.tf as tf
from s2s_ad.testing import check_grads

T0 = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
IDX = np.array([[0], [2], [0]])  # row 0 twice
UP = np.array([[10.0, 11.0], [20.0, 21.0], [30.0, 31.0]])
WEIGHTS = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


def test_a_slice_of_a_variable_assigns_into_it_as_tensorflow():
    v = tf.Variable([1.0, 2.0, 3.0, 4.0])
    assert v[1].assign(5.0) is v
    np.testing.assert_array_equal(v.numpy(), [1.0, 5.0, 3.0, 4.0])
    v[1:3].assign([7.0, 8.0])
    np.testing.assert_array_equal(v.numpy(), [1.0, 7.0, 8.0, 4.0])
    v[1:3].assign(9.0)  # a scalar is broadcast, as TensorFlow does
    np.testing.assert_array_equal(v.numpy(), [1.0, 9.0, 9.0, 4.0])
    assert v.dtype == np.float32
    m = tf.Variable(np.arange(6.0).reshape(2, 3))
    m[0, 1:].assign([10.0, 11.0])
    m[:, 1].assign([20.0, 21.0])
    np.testing.assert_array_equal(m.numpy(), [[0.0, 20.0, 11.0], [3.0, 21.0, 5.0]])


def test_only_a_variables_slice_has_assign():
    v = tf.Variable([1.0, 2.0, 3.0])
    assert hasattr(v[1], "assign")
    assert not hasattr(tf.constant([1.0]), "assign")
    assert not hasattr(v[1] * 2.0, "assign")
    with pytest.raises(AttributeError, match="no attribute 'assign'"):
        (v[0:2] + 1.0).assign(1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Cannot broadcast input shape \[3\]"):
        v[1:3].assign([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0, 3.0])  # unchanged


def test_np_array_of_a_variable_is_a_copy():
    v = tf.Variable([1.0, 2.0])
    a = np.array(v)
    a[0] = 9.0
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_a_slice_assign_in_a_tape_cuts_the_gradient_as_tensorflow():
    """TensorFlow 2.21: the loss before the write sees the old weights, the one after
    the new ones; the write itself carries no gradient."""
    w = tf.Variable([1.0, 2.0, 3.0])
    x = tf.constant([0.5, 1.5, 2.5])
    with tf.GradientTape(persistent=True) as tape:
        before = tf.reduce_sum(w * x)
        w[1].assign(10.0)
        after = tf.reduce_sum(w * w)
    np.testing.assert_allclose(tape.gradient(before, w), [0.5, 1.5, 2.5])
    np.testing.assert_allclose(tape.gradient(after, w), [2.0, 20.0, 6.0])


def test_variable_scatter_nd_methods():
    s = tf.Variable([1.0, 2.0, 3.0, 4.0, 5.0])
    assert s.scatter_nd_update([[1], [3]], [10.0, 20.0]) is s
    np.testing.assert_array_equal(s.numpy(), [1.0, 10.0, 3.0, 20.0, 5.0])
    s.scatter_nd_update([[1]], [1.0])
    s.scatter_nd_add([[1], [1]], [1.0, 1.0])  # repeated places add up
    s.scatter_nd_sub([[0]], [1.0])
    np.testing.assert_array_equal(s.numpy(), [0.0, 3.0, 3.0, 20.0, 5.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = \[9\] does not"):
        s.scatter_nd_update([[9]], [1.0])


def test_scatter_and_gather_values_as_tensorflow():
    np.testing.assert_array_equal(
        tf.tensor_scatter_nd_update(T0, [[0, 1], [2, 0]], [9.0, 8.0]),
        [[1.0, 9.0], [3.0, 4.0], [8.0, 6.0]],
    )
    np.testing.assert_array_equal(
        tf.tensor_scatter_nd_add(T0, IDX, UP), [[41.0, 44.0], [3.0, 4.0], [25.0, 27.0]]
    )
    np.testing.assert_array_equal(
        tf.scatter_nd(IDX, UP, [4, 2]), [[40.0, 42.0], [0.0, 0.0], [20.0, 21.0], [0.0, 0.0]]
    )
    np.testing.assert_array_equal(tf.gather_nd(T0, [[0, 1], [2, 0]]), [2.0, 5.0])
    np.testing.assert_array_equal(tf.gather_nd(T0, [[1]]), [[3.0, 4.0]])
    out = tf.tensor_scatter_nd_update(tf.constant(T0, dtype=tf.float32), [[1]], [[0.0, 0.0]])
    assert type(out).__name__ == "EagerTensor" and out.dtype == np.float32


@pytest.mark.parametrize(
    "call, text",
    [
        (lambda: tf.tensor_scatter_nd_update(T0, [[5]], [[1.0, 2.0]]), r"\[5\] does not index"),
        (lambda: tf.tensor_scatter_nd_update(T0, [[-1]], [[1.0, 2.0]]), r"\[-1\] does not"),
        (lambda: tf.tensor_scatter_nd_update(T0, [[1]], [1.0, 2.0, 3.0]), "Outer dimensions"),
        (lambda: tf.scatter_nd([[5]], [1.0], [3]), r"\[Op:ScatterNd\]"),
        (lambda: tf.gather_nd(T0, [[7]]), "param shape"),
    ],
)
def test_indices_are_checked_as_tensorflows_kernels_check_them(call, text):
    with pytest.raises(tf.errors.InvalidArgumentError, match=text):
        call()


def test_tape_gradients_match_tensorflows():
    """TensorFlow 2.21's gradients for these losses (repeated indices included)."""
    a, u = tf.Variable(T0), tf.Variable(UP)
    with tf.GradientTape(persistent=True) as tape:
        out = tf.tensor_scatter_nd_update(a, IDX, u)
        l1 = tf.reduce_sum(out * WEIGHTS)
        l2 = tf.reduce_sum(tf.tensor_scatter_nd_add(a, IDX, u) ** 2)
        l3 = tf.reduce_sum(tf.scatter_nd(IDX, u, [4, 2]) ** 2)
        l4 = tf.reduce_sum(tf.gather_nd(a, [[0, 1], [2, 0], [0, 1]]) * [1.0, 2.0, 3.0])
        l5 = tf.reduce_sum(tf.tensor_scatter_nd_sub(a, IDX, u) ** 2)
    expected = {
        "l1": ([[0, 0], [3, 4], [0, 0]], [[1, 2], [5, 6], [1, 2]]),
        "l2": ([[82, 88], [6, 8], [50, 54]], [[82, 88], [50, 54], [82, 88]]),
        "l3": (None, [[80, 84], [40, 42], [80, 84]]),
        "l4": ([[0, 4], [0, 0], [2, 0]], None),
        "l5": ([[-78, -80], [6, 8], [-30, -30]], [[78, 80], [30, 30], [78, 80]]),
    }
    for loss, (ga, gu) in zip((l1, l2, l3, l4, l5), expected.values()):
        got_a, got_u = tape.gradient(loss, [a, u])
        for got, want in ((got_a, ga), (got_u, gu)):
            if want is None:
                assert got is None
            else:
                np.testing.assert_allclose(got, want)
    np.testing.assert_array_equal(a.numpy(), T0)  # the ops wrote into copies


def _embedding_loss(table, rows, x):
    """A user's sparse update: the looked-up rows scaled, written back, scored."""
    picked = tf.gather_nd(table, rows)
    scaled = tf.tensor_scatter_nd_update(table, rows, picked * x)
    bumped = tf.tensor_scatter_nd_add(scaled, rows[:1], tf.tanh(picked[:1]))
    return tf.reduce_sum(tf.square(bumped)) + tf.reduce_sum(tf.scatter_nd(rows, picked, [5, 3]))


def test_generated_gradients_agree_with_finite_differences_in_both_modes():
    rng = np.random.default_rng(4)
    table = rng.standard_normal((4, 3))
    rows = np.array([[2], [0], [3]])
    x = rng.standard_normal((3, 3))
    check_grads(lambda t, s: _embedding_loss(t, rows, s), (table, x), modes=("rev", "fwd"))
    check_grads(lambda t, s: _embedding_loss(t, rows, s), (table, x), order=2)
    g_table, g_x = s2s_ad.grad(lambda t, s: _embedding_loss(t, rows, s), (0, 1))(table, x)
    assert g_table.shape == table.shape and g_x.shape == x.shape


def test_a_training_step_that_rewrites_rows_of_a_table():
    """An embedding table trained by a tape; rows are reset by ``scatter_nd_update``
    between steps (the write is not differentiated), as in TensorFlow."""
    table = tf.Variable(np.arange(12.0).reshape(4, 3) / 10.0)
    ids = np.array([[1], [3]])
    target = np.ones((2, 3))
    for _ in range(3):
        with tf.GradientTape() as tape:
            rows = tf.gather_nd(table, ids)
            loss = tf.reduce_mean(tf.square(rows - target))
        (g,) = tape.gradient(loss, [table])
        want = np.zeros((4, 3))
        want[[1, 3]] = 2.0 * (table.numpy()[[1, 3]] - target) / 6.0
        np.testing.assert_allclose(g, want)
        table.assign_sub(0.5 * np.asarray(g))
        table.scatter_nd_update([[0]], [[0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(table.numpy()[0], 0.0)


class _Counting(tf.Module):
    """A module that keeps statistics in a non-trainable Variable by index in its call."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.array([1.0, 2.0, 3.0]))
        self.seen = tf.Variable(np.zeros(3), trainable=False)

    def __call__(self, x):
        self.seen[1].assign(tf.reduce_sum(x))
        self.seen.scatter_nd_add([[2]], [1.0])
        return tf.reduce_sum(x * self.w)


def test_writes_by_index_inside_a_called_module_happen_once_per_step():
    module, x = _Counting(), np.array([0.5, 1.0, 2.0])
    for step in range(1, 3):
        with tf.GradientTape() as tape:
            y = module(x)
        np.testing.assert_allclose(tape.gradient(y, module.w), x)
        np.testing.assert_array_equal(module.seen.numpy(), [0.0, 3.5, float(step)])


def test_writes_by_index_between_losses_of_a_persistent_tape_as_tensorflow():
    """TensorFlow 2.21 printed these: a loss before the write is differentiated at the
    old values, one after it at the new ones, also from a gradient called in the block."""
    w = tf.Variable([1.0, 2.0, 3.0])
    x = tf.constant([0.5, 1.5, 2.5])
    with tf.GradientTape(persistent=True) as tape:
        y1 = tf.reduce_sum(w * w * x)
        w.scatter_nd_update([[1]], [10.0])
        y2 = tf.reduce_sum(w * w)
    np.testing.assert_allclose(tape.gradient(y1, w), [1.0, 6.0, 15.0])
    np.testing.assert_allclose(tape.gradient(y2, w), [2.0, 20.0, 6.0])
    with tf.GradientTape(persistent=True) as tape:
        y1 = tf.reduce_sum(w * w * x)
        w[0].assign(4.0)
        inside = tape.gradient(y1, w)
        y2 = tf.reduce_sum(w * w)
    np.testing.assert_allclose(inside, [1.0, 30.0, 15.0])
    np.testing.assert_allclose(tape.gradient(y2, w), [8.0, 20.0, 6.0])
    np.testing.assert_allclose(tape.gradient(y1, w), [1.0, 30.0, 15.0])
