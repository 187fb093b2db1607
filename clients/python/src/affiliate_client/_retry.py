"""Retries, below the generated client: an httpx transport that every generated operation goes through."""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import cast

import httpx

logger = logging.getLogger("affiliate_client")

IDEMPOTENCY_KEY = "Idempotency-Key"
#: Methods a repeat cannot change anything by: resent after a lost connection without a key.
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before sending a request again.

    429 and 503 are answered before anything ran, so they are retried for every method, after the
    ``Retry-After`` the platform sends (or an exponential backoff with jitter when it sends none).
    A lost connection is retried only where a repeat is harmless: a GET, or a request with an
    Idempotency-Key (every POST has one). A 409 with Retry-After is the platform saying the first
    attempt with this Idempotency-Key is still running: retried too.
    """

    max_retries: int = 3
    initial_backoff: float = 0.5
    max_backoff: float = 8.0
    #: A Retry-After longer than this is not waited for: the error is raised at once.
    max_retry_after: float = 60.0


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds: a number of seconds, or an HTTP date."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


class _Retries:
    """The decisions both transports share: the key to add, whether and how long to wait."""

    def __init__(self, policy: RetryPolicy):
        self._policy = policy

    def _prepare(self, request: httpx.Request) -> bool:
        """Adds the POST's Idempotency-Key; whether a lost connection may be retried."""
        if request.method == "POST" and IDEMPOTENCY_KEY not in request.headers:
            request.headers[IDEMPOTENCY_KEY] = str(uuid.uuid4())
        return request.method in _SAFE_METHODS or IDEMPOTENCY_KEY in request.headers

    def _delay_after(
        self, request: httpx.Request, outcome: httpx.Response | httpx.TransportError, resendable: bool, attempt: int
    ) -> float | None:
        """The wait before resending after this outcome; None to return the answer. A lost connection
        that may not be resent (or that used up the retries) is raised."""
        if isinstance(outcome, httpx.Response):
            return self._after_response(request, outcome, attempt)
        if attempt >= self._policy.max_retries or not resendable:
            raise outcome
        delay = self._backoff(attempt)
        self._log(request, type(outcome).__name__, delay, attempt)
        return delay

    def _after_response(self, request: httpx.Request, response: httpx.Response, attempt: int) -> float | None:
        """The wait before resending after this answer, or None to return it."""
        status = response.status_code
        retry_after = retry_after_seconds(response.headers.get("retry-after"))
        in_progress = status == 409 and retry_after is not None and IDEMPOTENCY_KEY in request.headers
        if attempt >= self._policy.max_retries or not (status in (429, 503) or in_progress):
            return None
        if retry_after is None:
            delay = self._backoff(attempt)
        elif retry_after <= self._policy.max_retry_after:
            delay = retry_after
        else:
            return None
        self._log(request, str(status), delay, attempt)
        return delay

    def _backoff(self, attempt: int) -> float:
        # Half fixed, half random: clients that failed together do not all come back together.
        ceiling = min(self._policy.max_backoff, self._policy.initial_backoff * 2**attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    @staticmethod
    def _log(request: httpx.Request, cause: str, delay: float, attempt: int) -> None:
        logger.info(
            "retrying %s %s after %s in %.2f s (retry %d)",
            request.method,
            request.url.path,
            cause,
            delay,
            attempt + 1,
            extra={
                "method": request.method,
                "path": request.url.path,
                "cause": cause,
                "delay": delay,
                "retry": attempt + 1,
                "idempotency_key": request.headers.get(IDEMPOTENCY_KEY),
            },
        )


class RetryingTransport(_Retries, httpx.BaseTransport):
    """Adds an Idempotency-Key to every POST that has none, and resends a request as RetryPolicy says,
    with the same key, so that the platform runs it at most once however often it is sent."""

    def __init__(self, inner: httpx.BaseTransport, policy: RetryPolicy, sleep: Callable[[float], None] = time.sleep):
        super().__init__(policy)
        self._inner = inner
        self._sleep = sleep

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        resendable = self._prepare(request)
        attempt = 0
        while True:
            try:
                response = self._inner.handle_request(request)
            except httpx.TransportError as error:
                self._sleep(cast(float, self._delay_after(request, error, resendable, attempt)))
            else:
                delay = self._delay_after(request, response, resendable, attempt)
                if delay is None:
                    return response
                response.close()
                self._sleep(delay)
            attempt += 1

    def close(self) -> None:
        self._inner.close()


class AsyncRetryingTransport(_Retries, httpx.AsyncBaseTransport):
    """RetryingTransport for the generated ``asyncio`` functions."""

    def __init__(self, inner: httpx.AsyncBaseTransport, policy: RetryPolicy):
        super().__init__(policy)
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        resendable = self._prepare(request)
        attempt = 0
        while True:
            try:
                response = await self._inner.handle_async_request(request)
            except httpx.TransportError as error:
                await asyncio.sleep(cast(float, self._delay_after(request, error, resendable, attempt)))
            else:
                delay = self._delay_after(request, response, resendable, attempt)
                if delay is None:
                    return response
                await response.aclose()
                await asyncio.sleep(delay)
            attempt += 1

    async def aclose(self) -> None:
        await self._inner.aclose()
