"""How far to cut filebench's gamma-distributed file sizes off.

filebench draws sizes from a gamma distribution with no upper bound; the core's
``SizeSpec::Gamma`` needs one. ssdlab cuts at the smallest whole multiple of the mean (at least
2) beyond which a size falls with probability at most :data:`TAIL` — for filebench's shape 1.5,
11 × the mean (at 10 × it is still 1.4e-6). The probability is the regularised
upper incomplete gamma function Q(shape, x · shape), x being the multiple of the mean.
"""

from __future__ import annotations

import math

TAIL = 1e-6


def upper_regularized_gamma(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a): a power series below a + 1, a continued fraction (modified
    Lentz) above."""
    if x <= 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        n = a
        for _ in range(10_000):
            n += 1
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        step = d * c
        h *= step
        if abs(step - 1) < 1e-16:
            break
    return math.exp(log_front) * h


def cap_multiple(shape: float, tail: float = TAIL) -> int:
    """The smallest whole k >= 2 with P(size > k × mean) <= tail, for sizes gamma-distributed
    with this shape (scale mean / shape)."""
    k = 2
    while upper_regularized_gamma(shape, k * shape) > tail and k < 100_000:
        k += 1
    return k
