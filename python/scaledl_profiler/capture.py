"""Keeping a library's chatter out of the user's way: Python warnings and whatever is printed to the standard
output and error streams (C++ warnings of the ONNX exporter included) are captured, counted and kept for
``--verbose``.
"""
import io
import os
import re
import sys
import tempfile
import warnings
from collections import Counter

_NOISE = re.compile(r"warn|deprecat|\[W ", re.IGNORECASE)


class _Stream:
    """sys.stdout/sys.stderr while capturing: writes go to the capture; after it, to the original stream (for
    whoever kept a reference meanwhile, such as a logging handler created during the capture)."""

    def __init__(self, capture, original):
        self._capture = capture
        self._original = original

    def release(self):
        self._capture = None

    def _target(self):
        return self._capture if self._capture is not None else self._original

    def write(self, text):
        return self._target().write(text)

    def flush(self):
        try:
            self._target().flush()
        except (AttributeError, ValueError):
            pass

    def isatty(self):
        return False if self._capture is not None else self._original.isatty()

    def __getattr__(self, name):
        return getattr(self._target(), name)


class Captured:
    """Context manager: captures warnings and stdout/stderr output (file descriptors 1 and 2) while it is open.

    After it closes, :attr:`warnings` holds ``(category, message)`` for every Python warning in order,
    :attr:`output` the captured text, :meth:`summary` a one-line count and :meth:`details` the full text (each
    distinct warning once, with its count).
    """

    def __init__(self):
        self.warnings = []
        self.output = ""
        self._fds = {}
        self._tmp = None
        self._ctx = None

    def __enter__(self):
        self._ctx = warnings.catch_warnings(record=True)
        self._records = self._ctx.__enter__()
        warnings.simplefilter("always")
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (AttributeError, ValueError):
                pass
        self._tmp = tempfile.TemporaryFile()
        self._streams = (sys.stdout, sys.stderr)
        # Python-level writes (sys.stdout may not be file descriptor 1, e.g. under pytest) and C-level ones alike.
        self._text = io.TextIOWrapper(os.fdopen(os.dup(self._tmp.fileno()), "wb"), encoding="utf-8",
                                      errors="replace", write_through=True)
        self._proxies = (_Stream(self._text, sys.stdout), _Stream(self._text, sys.stderr))
        sys.stdout, sys.stderr = self._proxies
        try:
            for fd in (1, 2):
                saved = os.dup(fd)
                self._fds[fd] = saved
                os.dup2(self._tmp.fileno(), fd)
        except OSError:  # no usable file descriptors 1 and 2 (embedded interpreters): Python-level only
            self._restore_fds()
        return self

    def _restore_fds(self):
        for fd, saved in self._fds.items():
            os.dup2(saved, fd)
            os.close(saved)
        self._fds = {}

    def _restore(self):
        self._restore_fds()
        sys.stdout, sys.stderr = self._streams
        for proxy in self._proxies:  # a logging handler made meanwhile keeps the proxy: it writes through again
            proxy.release()
        self._text.close()

    def __exit__(self, *exc):
        self._restore()
        if self._tmp is not None:
            self._tmp.seek(0)
            self.output = self._tmp.read().decode("utf-8", "replace")
            self._tmp.close()
            self._tmp = None
        self.warnings = [(w.category.__name__, str(w.message).strip()) for w in self._records]
        self._ctx.__exit__(*exc)
        if len(exc) > 1 and exc[1] is not None:
            try:
                exc[1].scaledl_captured = self  # the CLI shows it with --verbose
            except AttributeError:
                pass
        return False

    def output_warnings(self):
        """Lines of the captured output that are warnings (C++ ``[W ...]``, "Warning: ...", deprecations)."""
        return [line.strip() for line in self.output.splitlines() if line.strip() and _NOISE.search(line)]

    def count(self):
        return len(self.warnings) + len(self.output_warnings())

    def summary(self, what="export"):
        """``"12 warnings during export (TracerWarning 6, UserWarning 4, output 2)"``, or "" when there were none."""
        n = self.count()
        if n == 0:
            return ""
        kinds = Counter(c for c, _ in self.warnings)
        if self.output_warnings():
            kinds["printed"] = len(self.output_warnings())
        parts = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
        return f"{n} warning{'s' if n != 1 else ''} during {what} ({parts})"

    def details(self):
        """Every distinct warning once (with ``[xN]`` when repeated), then the captured output."""
        lines = []
        counts = Counter(self.warnings)
        for (category, message), n in sorted(counts.items(), key=lambda kv: self.warnings.index(kv[0])):
            lines.append(f"{category}: {message}" + (f" [x{n}]" if n > 1 else ""))
        if self.output.strip():
            lines.append("--- printed output ---")
            lines.append(self.output.rstrip())
        return "\n".join(lines)
