"""In-place writes that another name sees through a container: refused when they run.

The generated code keeps each name's value apart, so a write into an object that a list,
tuple or dict also holds (``rows.append(h); h[0] = ...``), into a list another name also
binds (``b = a; b.append(v)``) or into a list read out of another one (``row = grid[i];
row[0] = ...``), or into an array a kept slice, transpose or second name sees
(``w = y[1:3]; y[1] = ...``, ``a = b = np.zeros(3)``) would give a silently wrong
gradient; each is refused with a ``TransformError`` at the user's line. A view of other
entries than the written ones (``h = H[t, :]; H[t + 1, :] = ...``), or a container that
nothing reads after the write, is left alone. The same programs written without the
shared object (a fresh buffer per row, a copy before the write) are differentiated and
checked against finite differences (a loop over ``[a, b]`` then a write into ``a`` gave a
wrong gradient: the tape's record of ``a`` now has the write undone before it is read).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from s2s_ad import TransformError, check_grads, grad


def reused_buffer_rows(x):
    """One buffer appended for every row and then overwritten: every row is the buffer."""
    rows = []
    buf = np.zeros(2)
    for i in range(2):
        rows.append(buf)
        buf[0] = x[i] * 2.0
        buf[1] = np.sin(x[i + 1])
    return sum(np.sum(r**2) for r in rows)


def fresh_buffer_rows(x):
    rows = []
    for i in range(2):
        buf = np.zeros(2)
        buf[0] = x[i] * 2.0
        buf[1] = np.sin(x[i + 1])
        rows.append(buf)
    return sum(np.sum(r**2) for r in rows)


def state_dict_then_update(x):
    """Arrays kept in a dict of state, then updated in place through their own name."""
    mean = x * 0.5
    var = x**2
    state = {"mean": mean, "var": var}
    mean[0] = mean[0] * 3.0
    return np.sum(state["mean"] * state["var"])


def state_dict_rebuilt(x):
    mean = x * 0.5
    var = x**2
    mean = mean.copy()
    mean[0] = mean[0] * 3.0
    state = {"mean": mean, "var": var}
    return np.sum(state["mean"] * state["var"])


def history_alias(x):
    """A second name for the history list; appending through it grows the first too."""
    history = [x]
    log = history
    for _ in range(2):
        log.append(np.tanh(log[-1]) * 1.5)
    return np.sum(history[-1])


def history_one_name(x):
    history = [x]
    for _ in range(2):
        history.append(np.tanh(history[-1]) * 1.5)
    return np.sum(history[-1])


def grid_row_write(x):
    """A row of a list-of-lists matrix taken out and written into."""
    grid = [[x[0], x[1]], [x[2], x[3]]]
    row = grid[1]
    row[0] = row[0] * 10.0
    return grid[1][0] * grid[0][1]


def grid_row_rebuilt(x):
    grid = [[x[0], x[1]], [x[2], x[3]]]
    row = list(grid[1])
    row[0] = row[0] * 10.0
    grid[1] = row
    return grid[1][0] * grid[0][1]


def nested_list_then_write(x):
    """A list placed in another one, then written through its own name."""
    inner = [x[0], x[1]]
    outer = [inner, [x[2]]]
    inner[0] = x[3] ** 2
    return outer[0][0] * outer[1][0]


def unpacked_pair_pop(x):
    """Lists unpacked from a tuple, then one of them popped: the tuple's list shrinks."""
    pair = ([x[0], x[1]], [x[2]])
    first, second = pair
    last = first.pop()
    return last * pair[0][-1] + second[0]


def loop_row_scaling(x):
    """Each row of a list of arrays scaled in place by the loop variable."""
    rows = [x[:2] * 1.0, x[2:] * 1.0]
    for row in rows:
        row *= 2.0
        row[0] = row[0] ** 2
    return np.sum(rows[0] * rows[1])


def slice_then_base_write(x):
    """A slice of an array kept, then the array written where the slice looks."""
    y = x * 1.0
    window = y[1:3]
    y[1] = x[0] * 5.0
    return np.sum(window * x[1:3])


def chained_buffers(x):
    """``a = b = np.zeros(3)``: one array under two names."""
    a = b = np.zeros(3)
    a[0] = x[0] * 2.0
    return np.sum(b * x[:3])


def transpose_kept(x):
    """The transpose of a matrix kept, then the matrix written into."""
    A = np.outer(x, x)
    At = A.T
    A[0, 1] = 7.0 * x[2]
    return np.sum(At * A)


def preallocated_states(x):
    """Hidden states in preallocated rows: each row read as a view, the next one written."""
    H = np.zeros((4, 2))
    for t in range(3):
        h = H[t, :]
        H[t + 1, :] = np.tanh(h * x[t] + x[t + 1])
    return np.sum(H**2)


def split_state(x):
    """The first half of a state read as a slice, the second half written from it."""
    state = np.zeros(4)
    state[:2] = x[:2]
    first = state[:2]
    state[2:] = np.sin(first * x[2:])
    return np.sum(state**2)


def list_not_read_after_the_write(x):
    """Arrays listed for a loop, then one written: nothing reads the list afterwards."""
    a = x * 1.0
    b = x**2
    total = 0.0
    for arr in [a, b]:
        total = total + np.sum(np.sin(arr))
    a[0] = b[1] * 3.0
    return total + np.sum(a * b)


X = np.array([0.3, -0.7, 1.2, 0.5])

SHARED = [
    reused_buffer_rows,
    state_dict_then_update,
    history_alias,
    grid_row_write,
    nested_list_then_write,
    unpacked_pair_pop,
    loop_row_scaling,
    chained_buffers,
]
#: a view of a local array kept, then the array written: the view is derived again
#: after the write (norm_views), as NumPy's view would show it
FOLLOWED = [slice_then_base_write, transpose_kept]
APART = [
    fresh_buffer_rows,
    state_dict_rebuilt,
    history_one_name,
    grid_row_rebuilt,
    preallocated_states,
    split_state,
    list_not_read_after_the_write,
]


@pytest.mark.parametrize("f", FOLLOWED, ids=lambda f: f.__name__)
def test_a_write_a_view_of_a_local_sees_is_followed(f):
    check_grads(f, [X.copy()], modes=("rev", "fwd"))


@pytest.mark.parametrize("f", SHARED, ids=lambda f: f.__name__)
def test_a_write_another_name_sees_is_refused(f):
    with pytest.raises(TransformError) as info:
        grad(f)(X.copy())
    # located at the user's line of the write, which is shown
    assert "test_container_aliases.py:" in str(info.value)
    assert info.value.line_text.strip() in inspect.getsource(f)


@pytest.mark.parametrize("f", APART, ids=lambda f: f.__name__)
def test_the_same_program_without_sharing_is_differentiated(f):
    check_grads(f, (X.copy(),), modes=("rev", "fwd"))
