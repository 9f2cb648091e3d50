"""The by-step fault loops' shared parts (test_kill, test_parallel): how
many operations a command makes, found by bisection on "does the fault at
step n fire", and which steps this process runs.

CDD_STEP_SHARD=K/N (by hand, for long campaigns such as valgrind's on a
many-core host, scripts/valgrind.sh VALGRIND_SHARDS): a loop runs only its
steps n with (n - 1) % N == K, after counting the operations; N shards of
one test together run every step once. Unset: every step, as make test
runs them.
"""

import os


def step_shard():
    """(K, N) from CDD_STEP_SHARD=K/N, or None: every step."""
    v = os.environ.get("CDD_STEP_SHARD")
    if not v:
        return None
    k, n = (int(x) for x in v.split("/"))
    if not 0 <= k < n:
        raise ValueError("CDD_STEP_SHARD=%s: want K/N with 0 <= K < N" % v)
    return k, n


def shard_steps(total):
    """The steps 1 .. total + 1 (the last: past every operation, the
    command completes) that this process runs."""
    shard = step_shard()
    return [n for n in range(1, total + 2)
            if not shard or (n - 1) % shard[1] == shard[0]]


def last_firing(fires, limit):
    """The largest n for which fires(n) is true (fires(n + 1) is false),
    0 when fires(1) is not; fires must be true up to some n and false
    after. More than limit is an error (AssertionError)."""
    hi = 1
    while fires(hi):
        hi *= 2
        if hi >= limit * 2:
            raise AssertionError("the fault at step N never stops firing "
                                 "(past %d)" % limit)
    lo = hi // 2          # fires(lo) is true (or lo == 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fires(mid):
            lo = mid
        else:
            hi = mid
    return lo
