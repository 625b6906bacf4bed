"""Control flow: if/elif/else on data, conditional expressions, for over range (computed
bounds, negative steps), lists, tuples, array rows, enumerate, zip, while on data, nested
loops, break, continue, early return, variables overwritten many times.

Each case is evaluated at points that take different branches or trip counts; every point
is kept well away from a branch boundary so that finite differences stay valid.
"""

import math

import numpy as np

from . import away, case, normal


def seed_example(a):
    b = a * 2
    while np.linalg.norm(b) < 1000:
        b = b * 2
    if np.sum(b) > 0:
        c = b
    else:
        c = 100 * b
    return c


def if_elif_else(x):
    if x > 1.0:
        y = x**2
    elif x > -1.0:
        y = math.sin(x) + 1.0
    else:
        y = -(x**3)
    return y * 2.0 + x


def if_on_reduction(x):
    s = np.sum(x)
    if s > 1.0:
        out = np.sum(x**2)
    elif s < -1.0:
        out = np.sum(np.exp(x))
    else:
        out = np.prod(np.cos(x))
    return out * s


def if_without_else(x):
    y = x * 3.0
    if np.max(x) > 0.5:
        y = y * x
    return np.sum(y)


def nested_if(x, y):
    if x > 0.0:
        if y > 0.0:
            r = x * y
        else:
            r = x - y * y
    else:
        r = x**2 + y if y > 0.0 else -x * y
    return r


def conditional_expressions(x):
    y = x**2 if x > 0.0 else -x
    z = np.sin(x) if y > 1.0 else np.cos(x)
    return y * z + (z if z > 0.0 else 2.0 * z)


def branch_mixing_arrays(x):
    if x[0] > x[1]:
        h = np.tanh(x)
    else:
        h = x * x
    return np.sum(h * x)


def for_range_constant(x):
    acc = 0.0
    for i in range(4):
        acc = acc + x[i] * (i + 1.0) + acc * 0.1
    return acc


def for_range_computed_bounds(x):
    n = len(x)
    acc = 0.0
    for i in range(1, n - 1, 2):
        acc = acc + x[i] * x[i - 1]
    for j in range(n - 1, 0, -1):
        acc = acc * 0.9 + x[j] ** 2
    return acc


def for_range_data_dependent(s):
    n = int(abs(s) * 2.0) + 1
    acc = s
    for _ in range(n):
        acc = acc * 0.8 + s * s
    return acc


def for_range_start_stop_step_from_args(x, start, stop, step):
    acc = 0.0
    for i in range(start, stop, step):
        acc = acc + np.sin(x[i]) * x[i]
    return acc


def for_over_list(x):
    acc = 0.0
    for v in [x, x**2, np.sin(x)]:
        acc = acc * 0.5 + np.sum(v)
    return acc


def for_over_tuple(x, y):
    acc = 1.0
    for v in (x, y, x * y):
        acc = acc * v
    return np.sum(acc)


def for_over_array_rows(a):
    acc = 0.0
    for row in a:
        acc = acc + np.tanh(row @ row) * row[0]
    return acc


def for_over_vector_elements(x):
    acc = 1.0
    for v in x:
        acc = acc * (1.0 + 0.5 * v)
    return acc


def for_enumerate(x):
    acc = 0.0
    for i, v in enumerate(x):
        acc = acc + (i + 1) * v**2
    return acc


def for_zip(x, y):
    acc = 0.0
    for a, b in zip(x, y):
        acc = acc * 0.5 + a * b
    return acc


def while_data_dependent(x):
    y = x
    while y < 10.0:
        y = y * 1.5 + 0.1
    return y


def while_array_norm(x):
    h = x
    k = 0
    while np.linalg.norm(h) > 0.5:
        h = 0.7 * np.sin(h)
        k += 1
    return np.sum(h) * (k + 1)


def while_with_branch(x):
    y = x
    n = 0
    while n < 6:
        if y > 0.0:
            y = y - 0.3 * y * y
        else:
            y = y + 0.5
        n += 1
    return y


def nested_loops(a):
    acc = 0.0
    for i in range(3):
        for j in range(i + 1):
            acc = acc + a[i, j] * a[j, i]
    return acc


def nested_loops_lists(x):
    total = 0.0
    for i in range(len(x)):
        row = 0.0
        for j in range(i, len(x)):
            row = row + x[j] * np.cos(x[i])
        total = total + row**2
    return total


def for_break(x, thresh):
    acc = 0.0
    for v in x:
        if v > thresh:
            break
        acc = acc + v**2
    return acc + x[0]


def while_break(x):
    y = x
    while True:
        y = y * 1.3
        if y > 5.0:
            break
    return y


def for_continue(x):
    acc = 0.0
    for v in x:
        if v < 0.0:
            continue
        acc = acc + np.sin(v) * v
    return acc


def early_return_branch(x):
    if x > 2.0:
        return x**2
    y = x * 3.0
    if y < 0.0:
        return -y * x
    return y + x**3


def early_return_nested_loops(x):
    for i in range(len(x)):
        for j in range(len(x)):
            if x[i] * x[j] > 2.0:
                return x[i] * x[j] * 3.0
    return np.sum(x)


def early_return_in_while(x):
    y = x
    n = 0
    while n < 10:
        y = y * 1.2 + 0.1
        if y > 3.0:
            return y * x
        n += 1
    return -y


def overwrite_many_times(x):
    y = x
    y = y * 2.0
    y = np.sin(y)
    y = y + x
    y = y * y
    y = np.sum(y)
    y = y * np.sum(x)
    return y


def overwrite_in_loop(x, w):
    for _ in range(4):
        x = np.tanh(w @ x)
    return np.sum(x**2)


def loop_calls_user_function(x):
    h = x
    for _ in range(3):
        h = _step(h)
    return np.sum(h)


def _step(h):
    return h + 0.1 * np.sin(h) * h


def newton_sqrt(a):
    y = a
    for _ in range(6):
        y = 0.5 * (y + a / y)
    return y


def loop_variable_overwritten(x):
    acc = 0.0
    for v in x:
        v = v * 2.0
        acc = acc + v**2
    return acc


def conditional_update_in_loop(x):
    m = 1.0
    for v in x:
        if v > 0.0:
            m = m * v
        else:
            m = m + v
    return m


def break_inner_loop_only(a):
    acc = 0.0
    for i in range(3):
        for j in range(3):
            if a[i, j] < 0.0:
                break
            acc = acc + a[i, j] * (i + 1.0)
    return acc


def while_condition_calls_user_function(x):
    h = x
    while _energy(h) > 1.0:
        h = h * 0.8
    return np.sum(h * x)


def _energy(h):
    return np.sum(h * h)


def return_inside_enumerate_zip(x, y):
    acc = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        acc = acc + a * b * i
        if acc > 1.5:
            return acc * a
    return acc - 1.0


def unpack_rows_in_for(a):
    acc = 0.0
    for p, q in a:
        acc = acc + p * np.sin(q)
    return acc


def zip_three(x, y, z):
    acc = 0.0
    for a, b, c in zip(x, y, z):
        acc = acc + a * b - c**2
    return acc


def branch_writes_index(x):
    y = np.zeros_like(x)
    for i in range(len(x)):
        if x[i] > 0.0:
            y[i] = x[i] ** 2
        else:
            y[i] = -3.0 * x[i]
    return np.sum(y * x)


def while_inside_for(x):
    acc = 0.0
    for v in x:
        w = v
        while w < 4.0:
            w = w * 2.0 + 0.5
        acc = acc + w
    return acc


def list_comprehension(x):
    return sum([v**2 for v in x]) + np.sum(np.array([np.sin(v) for v in x]))


def generator_expression(x):
    return sum(v * v for v in x)


def empty_loop_and_zero_trips(x):
    acc = np.sum(x)
    for v in x[5:]:
        acc = acc + v**2
    for i in range(0):
        acc = acc * x[i]
    return acc


def while_true_return(x):
    y = x
    while True:
        y = y * 1.5
        if y > 4.0:
            return y * x
        if y < -4.0:
            break
    return -y


def rows_scaled_in_loop(a):
    b = a.copy()
    for i in range(len(b)):
        b[i] = b[i] * (i + 1.0) + b[i - 1]
    return np.sum(b**2)


def branch_on_overwritten_value(x):
    y = x * 2.0
    if y > 1.0:
        y = y - 3.0
    if y > 0.0:
        y = y * y
    else:
        y = -y * x
    return y


CASES = [
    # Trip counts: a=3 -> 8 doublings, a=0.7 -> 10, a=-2.5 -> 8 (and the else branch),
    # a=40 -> 4, a=1200 -> none. Every final |b| is >= 1.2x past 1000, so a finite-difference
    # step never changes the trip count.
    case(
        seed_example,
        points={
            "a3": (3.0,),
            "a0.7": (0.7,),
            "neg": (-2.5,),
            "a40": (40.0,),
            "no_loop": (1200.0,),
            "np_neg": (np.float64(-0.3),),
            "f32": (np.float32(3.0),),
        },
    ),
    case(if_elif_else, points={"if": (2.0,), "elif": (0.3,), "else": (-2.0,)}),
    case(
        if_on_reduction,
        points={
            "big": (np.array([0.8, 0.9, 0.7]),),
            "small": (np.array([-0.8, -0.9, -0.7]),),
            "mid": (np.array([0.2, -0.3, 0.4]),),
        },
    ),
    case(
        if_without_else,
        points={"taken": (np.array([0.9, 0.1, -0.2]),), "skipped": (np.array([0.1, -0.7]),)},
    ),
    case(
        nested_if,
        wrt=(0, 1),
        points={"pp": (1.5, 0.5), "pn": (1.2, -0.8), "np": (-0.7, 0.6), "nn": (-0.9, -1.1)},
    ),
    case(conditional_expressions, points={"pos_big": (1.5,), "pos_small": (0.4,), "neg": (-2.2,)}),
    case(
        branch_mixing_arrays,
        points={"then": (np.array([0.9, 0.2, -0.5]),), "else": (np.array([-0.4, 0.6, 1.1]),)},
    ),
    case(for_range_constant, normal(5)),
    case(for_range_computed_bounds, normal(6), n=1, points={"odd": (np.arange(1.0, 8.0) / 7,)}),
    case(for_range_data_dependent, points={"one": (0.3,), "three": (-1.2,), "six": (2.7,)}),
    case(
        for_range_start_stop_step_from_args,
        points={"fwd": (np.linspace(-1, 1, 7), 1, 6, 2), "bwd": (np.linspace(0, 2, 7), 6, 0, -3)},
    ),
    case(for_over_list, normal(4)),
    case(for_over_tuple, normal(3), normal(3), wrt=(0, 1)),
    case(for_over_array_rows, normal(4, 3)),
    case(for_over_vector_elements, normal(5)),
    case(for_enumerate, normal(5)),
    case(for_zip, normal(5), normal(5), wrt=(0, 1)),
    case(while_data_dependent, points={"many": (0.5,), "few": (6.0,), "none": (12.0,)}),
    case(
        while_array_norm,
        points={"many": (np.array([2.0, -1.5, 1.0]),), "none": (np.array([0.2, -0.1, 0.3]),)},
    ),
    case(while_with_branch, points={"pos": (1.3,), "neg": (-1.1,), "mixed": (-0.35,)}),
    case(nested_loops, normal(3, 3)),
    case(nested_loops_lists, normal(4)),
    case(
        for_break,
        points={
            "early": (np.array([0.1, 2.0, 0.3, 0.4]), 1.0),
            "late": (np.array([0.1, 0.2, 0.3, 1.5]), 1.0),
            "never": (np.array([0.1, -0.2, 0.3, 0.4]), 1.0),
        },
    ),
    case(while_break, points={"many": (0.4,), "one": (6.0,)}),
    case(for_continue, normal(6), n=3),
    case(early_return_branch, points={"first": (2.5,), "second": (-1.0,), "last": (0.7,)}),
    case(
        early_return_nested_loops,
        points={
            "inner": (np.array([0.5, 1.2, 1.9]),),
            "diag": (np.array([0.3, -1.7, 0.2]),),
            "none": (np.array([0.5, -0.8, 1.1]),),
        },
    ),
    case(early_return_in_while, points={"returns": (1.0,), "falls_through": (-2.0,)}),
    case(overwrite_many_times, normal(4)),
    case(overwrite_in_loop, normal(3), normal(3, 3), wrt=(0, 1)),
    case(loop_calls_user_function, normal(4)),
    case(newton_sqrt, points={"two": (2.0,), "ten": (10.0,), "small": (0.3,)}),
    case(loop_variable_overwritten, normal(4)),
    case(conditional_update_in_loop, away(0.2, 1.5, 5), n=3),
    case(
        break_inner_loop_only,
        points={
            "breaks": (np.array([[0.5, -0.2, 0.3], [0.4, 0.6, -0.7], [-0.1, 0.2, 0.3]]),),
            "none": (np.array([[0.5, 0.2, 0.3], [0.4, 0.6, 0.7], [0.1, 0.2, 0.3]]),),
        },
    ),
    case(
        while_condition_calls_user_function,
        points={"many": (np.array([1.5, -2.0, 0.7]),), "none": (np.array([0.2, 0.3, -0.1]),)},
    ),
    case(
        return_inside_enumerate_zip,
        wrt=(0, 1),
        points={
            "returns": (np.array([0.5, 1.2, 1.1, 0.3]), np.array([0.2, 1.0, 1.3, 0.7])),
            "falls_through": (np.array([0.5, 0.2, 0.1, 0.3]), np.array([0.2, 0.4, -0.3, 0.7])),
        },
    ),
    case(unpack_rows_in_for, normal(4, 2)),
    case(zip_three, normal(4), normal(4), normal(4), wrt=(0, 1, 2)),
    case(branch_writes_index, away(0.2, 1.5, 5), n=3),
    case(while_inside_for, points={"mixed": (np.array([0.3, 1.1, 5.0, 2.2]),)}),
    case(list_comprehension, normal(4)),
    case(generator_expression, normal(4)),
    case(empty_loop_and_zero_trips, normal(3)),
    case(while_true_return, points={"ret": (0.7,), "brk": (-0.7,)}),
    case(rows_scaled_in_loop, normal(3, 2)),
    case(
        branch_on_overwritten_value,
        points={"big": (2.0,), "mid": (0.8,), "small": (0.2,), "neg": (-1.0,)},
    ),
]
