"""Typed errors: every answer of 400 or more becomes an ApiError of the class its status names."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class ApiError(Exception):
    """An answer of 400 or more.

    ``message`` is the specification's text (``error``, or ``message`` where ``error`` is the status
    number); ``code`` the stable snake_case code of the error catalogue, ``param`` the offending field
    (a dotted path) where there is one, ``request_id`` what to quote to support (the body's
    ``requestId``, else the ``X-Request-Id`` header). ``code`` and ``param`` are None when the
    answer carries none. ``errors`` lists every problem of a 400 that found several.
    """

    status: int
    message: str
    code: str | None
    param: str | None
    request_id: str | None
    errors: list[dict[str, Any]]
    body: Any
    headers: Mapping[str, str]

    def __init__(self, status: int, body: Any, headers: Mapping[str, str]):
        fields = body if isinstance(body, dict) else {}
        message = fields.get("error") if isinstance(fields.get("error"), str) else fields.get("message")
        if not isinstance(message, str):
            message = body if isinstance(body, str) and body else f"HTTP {status}"
        self.status = status
        self.message = message
        self.code = fields.get("code") if isinstance(fields.get("code"), str) else None
        self.param = fields.get("param") if isinstance(fields.get("param"), str) else None
        request_id = fields.get("requestId")
        self.request_id = request_id if isinstance(request_id, str) else headers.get("x-request-id")
        self.errors = [problem for problem in fields.get("errors") or [] if isinstance(problem, dict)]
        self.body = body
        self.headers = headers
        super().__init__(self._describe())

    def _describe(self) -> str:
        details = ", ".join(
            f"{name}={value}" for name, value in (("code", self.code), ("param", self.param), ("request_id", self.request_id)) if value
        )
        return f"{self.status} {self.message}" + (f" ({details})" if details else "")


class BadRequestError(ApiError):
    """400: the request was refused before it ran; nothing changed."""


class AuthenticationError(ApiError):
    """401: no API key, or one the platform does not know."""


class PermissionDeniedError(ApiError):
    """403: the key lacks the scope the operation needs."""


class NotFoundError(ApiError):
    """404."""


class ConflictError(ApiError):
    """409: the state does not allow it, or an Idempotency-Key was reused for another request."""


class RateLimitError(ApiError):
    """429 after the client's own retries ran out."""


class ServerError(ApiError):
    """500 or more (503 after the client's own retries ran out)."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    429: RateLimitError,
}


def error_for(status: int, content: bytes, headers: Mapping[str, str]) -> ApiError:
    """The ApiError of an answer: its class by status, its fields from the JSON body when there is one."""
    try:
        body: Any = json.loads(content) if content else None
    except ValueError:
        body = content.decode("utf-8", "replace")
    kind = _BY_STATUS.get(status) or (ServerError if status >= 500 else ApiError)
    return kind(status, body, headers)
