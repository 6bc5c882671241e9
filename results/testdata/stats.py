#!/usr/bin/env python3
"""Writes stats.json: reference values for results/stats.go, computed here
with Python's standard library only (exact binomial sums with math.comb),
independently of the Go code and of gonum. Run: python3 stats.py > stats.json
"""
import json
import math
import random


def binom_cdf(n, k):
    """P(B <= k) for B ~ Binomial(n, 1/2), exactly."""
    if k < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(0, min(k, n) + 1)) / 2 ** n


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def median_ci(xs, conf=0.95):
    """Conover (1999) 3.2: [x(k), x(n-k+1)], k largest with P(B<=k-1) <= (1-conf)/2."""
    n = len(xs)
    s = sorted(xs)
    tail = (1 - conf) / 2
    k = 0
    for c in range(1, n // 2 + 1):
        if binom_cdf(n, c - 1) > tail:
            break
        k = c
    if k == 0:
        return None
    return {"lo": s[k - 1], "hi": s[n - k], "coverage": 1 - 2 * binom_cdf(n, k - 1)}


def sign_test(xs):
    pos = sum(1 for x in xs if x > 0)
    neg = sum(1 for x in xs if x < 0)
    n = pos + neg
    if n == 0:
        return 1.0
    return min(1.0, 2 * binom_cdf(n, min(pos, neg)))


def holm(ps):
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out


def robust_z(xs):
    if len(xs) < 3:
        return [0.0] * len(xs)
    med = median(xs)
    dev = [abs(x - med) for x in xs]
    mad = median(dev)
    scale = mad / 0.6745 if mad else 1.253314 * sum(dev) / len(xs)
    if scale == 0:
        return [0.0] * len(xs)
    return [(x - med) / scale for x in xs]


rng = random.Random(20261122)
cases = []
for n in [5, 6, 7, 10, 17, 20, 30, 31, 45, 60, 100, 250]:
    shift = rng.choice([-0.1, 0.0, 0.02, 0.3])
    xs = [round(rng.gauss(shift, 0.1), 6) for _ in range(n)]
    if n >= 10:
        xs[rng.randrange(n)] = 5.0  # one wild value
    cases.append({"xs": xs, "median": median(xs), "ci": median_ci(xs), "sign_p": sign_test(xs), "robust_z": robust_z(xs)})
# Ties at the median (MAD 0) and zeros (dropped by the sign test).
tied = [1.0] * 7 + [1.5, 0.9, 3.0]
cases.append({"xs": tied, "median": median(tied), "ci": median_ci(tied), "sign_p": sign_test(tied), "robust_z": robust_z(tied)})
zeros = [0.0, 0.0, 0.1, 0.2, -0.1, 0.3, 0.4, 0.5]
cases.append({"xs": zeros, "median": median(zeros), "ci": median_ci(zeros), "sign_p": sign_test(zeros), "robust_z": robust_z(zeros)})

holm_cases = []
for ps in [[0.01, 0.04, 0.03, 0.005], [0.2, 0.5], [0.049], [0.04, 0.04], [1e-9, 0.3, 0.02, 0.02, 0.9]]:
    holm_cases.append({"p": ps, "adjusted": holm(ps)})

print(json.dumps({"median": cases, "holm": holm_cases}, indent=1))
