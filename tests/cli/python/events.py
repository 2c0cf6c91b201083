# SPDX-License-Identifier: MIT
"""events.py MODE ... - trail's Python module, as tests/cli/test-uevents.sh
runs it (PYTHONPATH: the build's bindings/python).

  types N          N records of app:types, every kind of field, values
                   from i; prints "written N" (0 when not recorded)
  errors           the module's answers to bad definitions and values,
                   one line each
  threads T N      T threads, N records each
  wait FILE        write app:tick while FILE does not exist (attach and
                   detach from outside); prints the enabled flips seen
                   and the records written
  logging N        N logging records through trail.LoggingHandler
"""
import logging
import os
import sys
import threading
import time

import trail

mode = sys.argv[1]


def types(n):
    ev = trail.event("app", "types", u8="u8", s16="s16", u32="u32", s64="s64", flag="bool",
                     ratio="double", f32="float", name="string", raw="bytes", tag="char[8]")
    w = 0
    for i in range(n):
        if ev.enabled:
            ev(u8=i % 256, s16=-i, u32=i * 1000, s64=-(i ** 3), flag=i % 3 == 0, ratio=i / 4,
               f32=i, name=f"n\u00e9-{i}" if i % 2 else None, raw=bytes(range(i % 5)),
               tag="0123456789")
            w += 1
    print("written", w)


def errors():
    def show(what, fn):
        try:
            fn()
            print(what, "ok")
        except Exception as e:  # the exception's type and first line
            print(what, type(e).__name__, str(e).splitlines()[0])

    ev = trail.event("app", "err", n="u32", s="string", b="bytes", d="double")
    show("bad_type", lambda: trail.event("app", "x", n="u128"))
    show("bad_name", lambda: trail.event("app", "bad-name", n="u32"))
    show("bad_system", lambda: trail.event("a pp", "x", n="u32"))
    show("type_not_str", lambda: trail.event("app", "x", n=32))
    show("definition", lambda: trail.event("app", "defd u32 n; string s"))
    show("definition_bad", lambda: trail.event("app", "defb u32 n; strang s"))
    show("other_fields", lambda: trail.event("app", "err", n="u64"))
    show("same_fields", lambda: trail.event("app", "err", n="u32", s="string", b="bytes", d="double"))
    print("fields", ev.fields)
    print("enabled", ev.enabled)
    # (values are checked only when the event is recorded)
    if ev.enabled:
        show("str_for_int", lambda: ev(n="3", s="x", b=b"", d=1.0))
        show("int_for_str", lambda: ev(n=3, s=4, b=b"", d=1.0))
        show("str_for_bytes", lambda: ev(n=3, s="x", b="no", d=1.0))
        show("str_for_double", lambda: ev(n=3, s="x", b=b"", d="1"))
        show("missing", lambda: ev(n=3, s="x", b=b""))
        show("unknown", lambda: ev(n=3, s="x", b=b"", d=1.0, e=2))
        show("twice", lambda: ev(3, "x", b"", 1.0, n=4))
        show("too_many", lambda: ev(3, "x", b"", 1.0, 5))
        show("too_big", lambda: ev(n=2 ** 70, s="x", b=b"", d=1.0))
        show("none_string", lambda: ev(n=1, s=None, b=None, d=2))
        show("positional", lambda: ev(2, "\u4e2d\u6587", bytearray(b"\x00\xff"), 0.5))


def worker(ev, n, out, k):
    w = 0
    for i in range(n):
        if ev.enabled:
            ev(k, i)
            w += 1
    out[k] = w


def threads(t, n):
    ev = trail.event("app", "th", t="u32", i="u32")
    out = [0] * t
    th = [threading.Thread(target=worker, args=(ev, n, out, k)) for k in range(t)]
    for x in th:
        x.start()
    for x in th:
        x.join()
    print("written", sum(out))


def wait(stop):
    ev = trail.event("app", "tick", i="u64")
    flips, last, w, i = 0, False, 0, 0
    print("ready", flush=True)
    t0 = time.monotonic()
    while not os.path.exists(stop) and time.monotonic() - t0 < 60:
        on = ev.enabled
        if on != last:
            flips += 1
            last = on
        if on:
            ev(i)
            w += 1
        i += 1
        if i % 100 == 0:
            time.sleep(0.001)
    print(f"flips={flips} written={w}")


def log(n):
    lg = logging.getLogger("app.log")
    lg.setLevel(logging.DEBUG)
    lg.propagate = False
    lg.addHandler(trail.LoggingHandler())
    for i in range(n):
        lg.log(logging.WARNING if i % 2 else logging.INFO, "record %d of %s", i, "test")
    print("logged", n)


if mode == "types":
    types(int(sys.argv[2]))
elif mode == "errors":
    errors()
elif mode == "threads":
    threads(int(sys.argv[2]), int(sys.argv[3]))
elif mode == "wait":
    wait(sys.argv[2])
elif mode == "logging":
    log(int(sys.argv[2]))
