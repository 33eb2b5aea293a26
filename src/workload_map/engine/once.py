"""``cached_property`` without the lock Python 3.11's takes on every first read.

``functools.cached_property`` of 3.11 serialises each first access through an ``RLock``
(removed in 3.12, where it is this same non-data descriptor). A ``Workload`` reads three or four
of them, and the engine builds one ``Workload`` per object, so the lock is a measurable share of
a status or attribution pass over thousands of objects. The value lands in the instance's
``__dict__``, so later reads never reach the descriptor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

__all__ = ["cached_property", "computed"]

T = TypeVar("T")


class cached_property(Generic[T]):  # noqa: N801 (named as the functools one it replaces)
    """Compute on first access, then read from the instance's ``__dict__``."""

    def __init__(self, func: Callable[[Any], T]):
        self.func = func
        self.attrname = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.attrname = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached_property[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.attrname] = self.func(instance)
        return value


def computed(instance: object, name: str) -> Any:
    """The value ``instance``'s cached property ``name`` holds already, None when it was not
    computed yet: a reader that takes a value another consumer derived, without deriving it."""
    return instance.__dict__.get(name)
