"""The error types tcforge raises for bad input; the CLI turns them into one clean line and exit status 2."""

from __future__ import annotations


class TcforgeError(ValueError):
    """Base of every bad-input error tcforge raises on purpose (a ValueError, so callers may catch either)."""


class UnsupportedError(TcforgeError):
    """A shape, dtype, device or feature tcforge does not support (the message says what to change)."""


class DeviceUnavailableError(TcforgeError):
    """A GPU path was asked for where no suitable CUDA device (sm_90a) or toolkit is present."""
