"""NumPy's floating-point error handling, for the exceptions a fused kernel raised.

NumPy tests the floating-point status after each ufunc call and handles each exception raised
as ``np.errstate``/``np.seterr`` say: ``"ignore"``, ``"warn"`` (a ``RuntimeWarning`` such as
``divide by zero encountered in log``), ``"raise"`` (``FloatingPointError``), ``"call"``,
``"print"`` or ``"log"`` (``np.seterrcall``). The CPU VM records the exceptions per
instruction (lazyarr/backends/_cpu_vm.h, ``lz_fpe_take``); :func:`report` handles them the same
way, under the error state in effect when the kernel runs (the materialization), naming the
user's line that materialized.
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

from .._stack import user_stacklevel

#: NumPy's error state (``np.errstate``/``np.seterr``): a context variable whose value each
#: errstate/seterr replaces. A private NumPy name (numpy is pinned below 2.5 in pyproject.toml),
#: read here only: the cuda flags (flags.py) and the reference backend's calls (reference.py)
#: take it from here, and do without it (None) where a NumPy lacks it.
ERROR_STATE = getattr(np._core.umath, "_extobj_contextvar", None)


class Decided(NamedTuple):
    """What NumPy's error state decides for lazyarr, made once per state (:func:`decided`)."""

    ext: Any                  # the error state's value (its identity is the memo's key)
    state: dict[str, str]     # ``np.geterr()``
    checking: bool            # divide, over or invalid not ignored: checked kernels run
    immediate: bool           # one of those handled at once (raise, call, print, log)
    interrupting: bool        # any category raises or calls a handler


_CHECKED = ("divide", "over", "invalid")
_IMMEDIATE = frozenset({"raise", "call", "print", "log"})
_decided = Decided(object(), {}, True, False, False)


def decided() -> Decided:
    """:class:`Decided` for the error state of now. NumPy's error state lives in a context
    variable whose value every errstate/seterr replaces: the decisions are made again only
    when it changes (``np.geterr()`` is ~0.6 µs, the decisions ~2 µs: too much for every
    launch and every write; the lookup is ~15 ns)."""
    global _decided
    ext = ERROR_STATE.get() if ERROR_STATE is not None else None
    known = _decided
    if ext is None or ext is not known.ext:
        state = np.geterr()
        handling = state.values()
        known = Decided(ext, state, any(state[k] != "ignore" for k in _CHECKED),
                        any(state[k] in _IMMEDIATE for k in _CHECKED),
                        "raise" in handling or "call" in handling)
        if ext is not None:
            _decided = known       # (holding ``ext``: its identity stays its own)
    return known


def interrupting() -> bool:
    """Whether a floating-point error would raise (or call a handler) under ``np.errstate``
    now: NumPy does that before an assignment writes anything."""
    return decided().interrupting


#: NPY_FPE_DIVIDEBYZERO, NPY_FPE_OVERFLOW, NPY_FPE_INVALID (what 0/0 raises)
DIVIDE, OVERFLOW, INVALID = 1, 2, 8
#: NumPy's order, bits (NPY_FPE_*), ``np.geterr`` keys and message words
_CATEGORIES = ((1, "divide", "divide by zero"), (2, "over", "overflow"),
               (4, "under", "underflow"), (8, "invalid", "invalid value"))


def divide_words(out_shape: tuple[int, ...]) -> str:
    """The step NumPy's warning names for the division that ends its mean/var/std: a 0-d
    result is divided as a NumPy scalar ("scalar divide")."""
    return "scalar divide" if out_shape == () else "divide"


def report(raised: Iterable[tuple[int, str]], line: tuple[str, int] | None = None,
           state: dict[str, str] | None = None) -> None:
    """Handle each ``(flags, where)``: the NPY_FPE_* bits an operation raised and its name
    (``"log"``, ``"cast"``, ``"reduce"``), as NumPy's current error state says. A warning
    names the user's line on the stack, or ``line`` (file, line number): where a cuda kernel
    reported later was materialized, under ``state`` (``np.geterr()`` then)."""
    for flags, where in raised:
        for bit, key, what in _CATEGORIES:
            if not flags & bit:
                continue
            if state is None:
                state = np.geterr()
            mode = state[key]
            if mode == "ignore":
                continue
            message = f"{what} encountered in {where}"
            if mode == "warn" and line is not None:
                warnings.warn_explicit(message, RuntimeWarning, *line)
            elif mode == "warn":
                warnings.warn(message, RuntimeWarning, stacklevel=user_stacklevel())
            elif mode == "raise":
                raise FloatingPointError(message)
            elif mode == "call":
                np.geterrcall()(what, bit)
            elif mode == "print":
                print(f"Warning: {message}")
            elif mode == "log":
                np.geterrcall().write(f"Warning: {message}\n")


def report_messages(lines: Iterable[str]) -> None:
    """:func:`report` of the messages NumPy wrote under ``np.errstate`` ``log`` mode
    (``"Warning: overflow encountered in add\n"``), in their order, under the error state in
    effect now: NumPy's own words, at the user's line."""
    words = {what: bit for bit, _, what in _CATEGORIES}
    raised = []
    for line in lines:
        what, sep, where = line.removeprefix("Warning: ").rstrip("\n").partition(" encountered in ")
        if sep and what in words:
            raised.append((words[what], where))
    report(raised)
