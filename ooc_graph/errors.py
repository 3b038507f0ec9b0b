"""One exception hierarchy for the whole package.

Every message names the offending value and, where there is a fixed set, the valid choices.
"""

from __future__ import annotations


class OocGraphError(Exception):
    """Base class of every error raised by ooc_graph."""


class InputError(OocGraphError, ValueError):
    """An input edge file or array is malformed.

    ``path`` and ``line`` (1-based) locate the problem when it comes from a file.
    """

    def __init__(self, message: str, *, path=None, line: int | None = None, value=None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f", line {line}"
            where += ": "
        text = where + message
        if value is not None:
            text += f" (got {value!r})"
        super().__init__(text)
        self.path = path
        self.line = line
        self.value = value


class StoreError(OocGraphError):
    """A graph store (.h5) cannot be read: missing, truncated, corrupted or of an unknown version."""


class FormatVersionError(StoreError):
    """The store was written with a format version this reader does not know."""


class StoreBusyError(StoreError):
    """Another process kept the store locked (open for reading, or writing) past the lock timeout."""


class ParameterError(OocGraphError, ValueError):
    """An argument to a public function is out of range or not one of the valid choices."""


class DeviceError(OocGraphError):
    """The requested device cannot be used (no GPU, or the vertex state does not fit)."""


class JobError(OocGraphError):
    """A distributed job failed: a worker died, raised, or the cluster could not run it."""


class JobCancelled(JobError):
    """A run or job was cancelled before it finished."""


class ConvergenceError(OocGraphError):
    """An iterative algorithm did not converge within ``max_iter`` iterations (unless the call
    passed ``raise_on_nonconvergence=False``), or its values became infinite or NaN (always).
    ``result`` holds what the call computed (None where the values diverged)."""

    def __init__(self, message: str, result=None):
        super().__init__(message)
        self.result = result


def check_converged(result) -> None:
    """A :class:`ConvergenceError` holding ``result`` where it did not converge."""
    if result.converged:
        return
    last = result.stats.get("convergence") or [(result.iterations, None)]
    change = "" if last[-1][1] is None else f", the last change {last[-1][1]:.3g}"
    tol = result.parameters.get("tol")
    raise ConvergenceError(f"{result.algorithm} did not converge in {result.iterations} iterations{change}"
                           f"{'' if tol is None else f' (tol {tol:g})'}; raise max_iter, or pass "
                           f"raise_on_nonconvergence=False (--no-raise-on-nonconvergence) to have the values anyway", result)


class ResultNotStoredWarning(UserWarning):
    """A result could not go into its graph's store (locked, read-only or replaced) and was written
    to a file beside it instead; the message names that file and the reason."""


def choice(name: str, value, choices) -> ParameterError:
    """The standard 'unknown X' error: names the value and lists the valid choices."""
    return ParameterError(f"unknown {name} {value!r} (valid: {', '.join(map(str, choices))})")


def install(extra: str, packages: str) -> str:
    """How to install what one of the project's extras brings, for a message: the packages by
    name, or the extra from a checkout of the repository (ooc-graph is not on a package index).

    >>> install("plot", "matplotlib")
    "pip install matplotlib (or pip install -e '.[plot]' in a checkout of ooc_graph)"
    """
    return f"pip install {packages} (or pip install -e '.[{extra}]' in a checkout of ooc_graph)"


def shown(text) -> str:
    """``text`` as a message may show it: itself where every character is printable, else its
    ``repr`` (escaped), so that a name read from a file cannot put control characters or terminal
    escape sequences on a terminal, nor break a one-line error."""
    text = text if isinstance(text, str) else str(text)
    return text if text.isprintable() else repr(text)
