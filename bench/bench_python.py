# SPDX-License-Identifier: MIT
"""bench_python.py MODE [N] - the cost of an event from Python, timed in
the interpreter: ns per iteration of a loop minus the same empty loop.

  trail      trail.event('bench', 'py', a='u64', b='u64'): the guard alone
             (ev.enabled) and ev(i, i) behind it; recorded or not, as run
  logging    logging.getLogger('bench').info('msg %d', i) through
             trail.LoggingHandler (the record only; no other handler)
  lttng      the same logging call with LTTng-UST's Python agent
             (python3-lttngust's lttngust module) as the only handler
  nop        the same logging call with a handler that does nothing: the
             logging module's own cost (the caller found, the record
             made), which the two above pay too

The interpreter pins itself to BENCH_CPU (as the C benchmarks do).
Prints one RESULT line.
"""
import logging
import os
import sys
import time

if os.environ.get("BENCH_CPU", "") not in ("", "-1"):
    os.sched_setaffinity(0, {int(os.environ["BENCH_CPU"])})

mode = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000


def timed(fn):
    t0 = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t0) / n


def empty():
    for i in range(n):
        pass


if mode == "trail":
    import trail
    ev = trail.event("bench", "py", a="u64", b="u64")

    def guard():
        for i in range(n):
            if ev.enabled:
                pass

    def write():
        for i in range(n):
            if ev.enabled:
                ev(i, i)

    def write_kw():
        for i in range(n):
            if ev.enabled:
                ev(a=i, b=i)

    base = min(timed(empty) for _ in range(3))
    g = min(timed(guard) for _ in range(3)) - base
    w = timed(write) - base
    k = timed(write_kw) - base
    print(f"RESULT mode=trail enabled={int(ev.enabled)} guard_ns={g:.1f} call_ns={w:.1f} "
          f"call_kw_ns={k:.1f}")
else:
    log = logging.getLogger("bench")
    log.setLevel(logging.DEBUG)
    log.propagate = mode == "lttng"
    if mode == "logging":
        import trail
        log.addHandler(trail.LoggingHandler())
    elif mode == "nop":
        class Nop(logging.Handler):
            def emit(self, record):
                pass
        log.addHandler(Nop())
    else:
        import lttngust  # noqa: F401 (registers its handler on the root logger)
        # its session daemon registration is asynchronous
        time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 1.0)

    def logs():
        for i in range(n):
            log.info("msg %d", i)

    base = timed(empty)
    w = timed(logs) - base
    print(f"RESULT mode={mode} log_ns={w:.1f}")
