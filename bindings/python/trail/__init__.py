# SPDX-License-Identifier: MIT
"""trail: events defined at run time, recorded by trail (ftrace for processes).

    import trail
    ev = trail.event("app", "request", fd="u32", path="string")
    if ev.enabled:                       # one load: is a session recording it?
        ev(fd=3, path="/index.html")     # or ev(3, "/index.html")

    trail record -e 'app:*' -- python3 app.py
    trail record -e 'app:request' -f 'fd > 2' -P PID      # a running interpreter

Field types are those of the kernel's user_events (u8..u64, s8..s64, int,
char[N]) and trail's: string, bytes, bool, float, double. A definition
string works too: trail.event("app", "request u32 fd; string path").

LoggingHandler turns the logging module's records into python:logging
events, with the fields LTTng's Python agent records:

    logging.getLogger().addHandler(trail.LoggingHandler())
    trail record -e 'python:logging' -- python3 app.py
"""
import logging as _logging

from ._trail import Event, event, _log

__all__ = ["Event", "event", "LoggingHandler"]

# the fields of LTTng-UST's Python agent's lttng_python:event (asctime is
# its formatted record), and the record's path besides
_LOGGING = ("logging string asctime; string msg; string logger_name; string funcName; "
            "s32 lineno; s32 int_loglevel; s64 thread; string threadName; string pathname")


class LoggingHandler(_logging.Handler):
    """A logging handler writing each record as a python:logging event."""

    _event = None

    def __init__(self, level=_logging.NOTSET):
        super().__init__(level)
        if LoggingHandler._event is None:
            LoggingHandler._event = event("python", _LOGGING)
        self._ev = LoggingHandler._event

    def handle(self, record):
        # (no lock: the event's write is thread-safe; filters still apply)
        if not self._ev.enabled:
            return False
        if self.filters and not self.filter(record):
            return False
        try:  # (emit's work, without a call more)
            _log(self._ev, record, self.format(record) if self.formatter else None)
        except Exception:
            self.handleError(record)
        return True

    def emit(self, record):
        try:
            # asctime: the record as formatted, LTTng's; without a
            # formatter that is the message (Formatter()'s default),
            # and formatting it again would double the cost
            _log(self._ev, record, self.format(record) if self.formatter else None)
        except Exception:
            self.handleError(record)
