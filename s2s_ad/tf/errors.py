"""``tf.errors``: the exception classes TensorFlow code catches."""

from __future__ import annotations


class OpError(Exception):
    """Base of TensorFlow's runtime errors."""

    def __init__(self, node_def: object = None, op: object = None, message: str = "") -> None:
        super().__init__(message or node_def)
        self.message = message or str(node_def)
        self.node_def = node_def if message else None
        self.op = op


class InvalidArgumentError(OpError, ValueError):
    """An operation received an invalid argument (a shape or value check failed)."""


class NotFoundError(OpError):
    pass


class OutOfRangeError(OpError):
    pass


class ResourceExhaustedError(OpError):
    pass


class UnimplementedError(OpError):
    pass


class FailedPreconditionError(OpError):
    pass


__all__ = [
    "FailedPreconditionError",
    "InvalidArgumentError",
    "NotFoundError",
    "OpError",
    "OutOfRangeError",
    "ResourceExhaustedError",
    "UnimplementedError",
]
