"""dmindex.Error and its subclasses: a C++ Status that is not OK, raised.

Every exception carries the Status code (``code``, a ``Code``) and its message
(``message``). Classes also derive from the built-in exception a Python user would catch
for the same thing: ``NotFound`` is a ``KeyError``, ``InvalidArgument`` a ``ValueError``,
``Unavailable`` a ``ConnectionError``, ``NotSupported`` a ``NotImplementedError``.
"""

import enum


class Code(enum.IntEnum):
    """dmindex::Status::Code (include/dmindex/status.h), by the same values."""

    OK = 0
    NOT_FOUND = 1
    INVALID_ARGUMENT = 2
    UNAVAILABLE = 3
    OUT_OF_SPACE = 4
    CORRUPTION = 5
    IO_ERROR = 7
    NOT_SUPPORTED = 8
    ABORTED = 9
    NOT_OWNER = 10
    BUSY = 11


class Error(Exception):
    """A dmindex call failed: ``code`` says how, ``message`` what."""

    code = None

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = Code(code)

    def __str__(self):
        # As C++'s Status::ToString: "NotFound: message".
        name = _BY_CODE[self.code].__name__ if self.code in _BY_CODE else "Error"
        return f"{name}: {self.message}" if self.message else name


class NotFound(Error, KeyError):
    code = Code.NOT_FOUND


class InvalidArgument(Error, ValueError):
    code = Code.INVALID_ARGUMENT


class Unavailable(Error, ConnectionError):
    code = Code.UNAVAILABLE


class OutOfSpace(Error):
    code = Code.OUT_OF_SPACE


class Corruption(Error):
    code = Code.CORRUPTION


class IoError(Error):
    code = Code.IO_ERROR


class NotSupported(Error, NotImplementedError):
    code = Code.NOT_SUPPORTED


class Aborted(Error):
    code = Code.ABORTED


class NotOwner(Error):
    code = Code.NOT_OWNER


class Busy(Error):
    code = Code.BUSY


_BY_CODE = {cls.code: cls for cls in Error.__subclasses__()}


def error_of(code, message):
    """The exception for a Status (the extension raises what this returns)."""
    code = Code(code)
    return _BY_CODE.get(code, Error)(message, code)
