"""The client integrators hold: the generated operations, called with retries, typed errors and paging."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import AsyncIterator, Iterator
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from ._errors import error_for
from ._retry import AsyncRetryingTransport, RetryingTransport, RetryPolicy
from .generated.client import AuthenticatedClient
from .generated.types import UNSET

_NEXT_LINK = re.compile(r'<([^>]*)>\s*;[^,]*\brel="?next"?', re.IGNORECASE)


def next_cursor(link_header: str | None) -> str | None:
    """The startingAfter of the Link header's rel="next" page, or None on the last page."""
    match = _NEXT_LINK.search(link_header or "")
    if match is None:
        return None
    values = parse_qs(urlsplit(match.group(1)).query).get("startingAfter")
    return values[0] if values else None


class AffiliateClient:
    """The API with an API key (``ak_…``), or the admin API with the admin token.

    Every operation of the document is a module of ``affiliate_client.generated.api``; ``call`` runs one
    and returns its parsed answer, ``iterate`` walks every page of a list::

        from affiliate_client.generated.api.sales import create_sale, get_sales
        from affiliate_client.generated.models import CreateSaleBody

        with AffiliateClient("https://affiliates.example.com", api_key) as client:
            sale = client.call(create_sale, body=CreateSaleBody(promo_code="SPRING20", total_earned=100))
            for sale in client.iterate(get_sales, limit=100):
                ...
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
    ):
        policy = retry or RetryPolicy()
        settings: dict[str, Any] = {
            "base_url": base_url.rstrip("/"),
            "headers": {"Authorization": f"Bearer {api_key}", "User-Agent": f"affiliate-client-python/{_version()}"},
            "timeout": httpx.Timeout(timeout),
        }
        #: The generated client, for calling a generated operation's functions directly (``sync_detailed``
        #: and ``asyncio_detailed``): both go through the retrying transports.
        self.api = AuthenticatedClient(base_url=settings["base_url"], token=api_key, raise_on_unexpected_status=False)
        self.api.set_httpx_client(httpx.Client(**settings, transport=RetryingTransport(transport or httpx.HTTPTransport(), policy)))
        self.api.set_async_httpx_client(
            httpx.AsyncClient(**settings, transport=AsyncRetryingTransport(async_transport or httpx.AsyncHTTPTransport(), policy))
        )

    def call(self, operation: ModuleType, **arguments: Any) -> Any:
        """Runs a generated operation; returns its parsed answer, or raises the ApiError its status names."""
        return _result(operation, self.api, self.api.get_httpx_client().request(**operation._get_kwargs(**arguments)))

    async def call_async(self, operation: ModuleType, **arguments: Any) -> Any:
        """``call`` with asyncio."""
        return _result(operation, self.api, await self.api.get_async_httpx_client().request(**operation._get_kwargs(**arguments)))

    def iterate(self, operation: ModuleType, *, limit: int | None = None, **filters: Any) -> Iterator[Any]:
        """Every item of a list operation, page after page, following the Link header's next page.

        ``limit`` is the page size (the platform's default when None); ``filters`` are the
        operation's other query parameters, kept on every page. A list without paging (the event
        types, the publishable keys) is one page.
        """
        pages = _Pages(operation, self.api, limit, filters)
        while pages.arguments is not None:
            yield from pages.read(self.api.get_httpx_client().request(**operation._get_kwargs(**pages.arguments)))

    async def iterate_async(self, operation: ModuleType, *, limit: int | None = None, **filters: Any) -> AsyncIterator[Any]:
        """``iterate`` with the operation's ``asyncio_detailed``: ``async for sale in client.iterate_async(get_sales)``."""
        pages = _Pages(operation, self.api, limit, filters)
        while pages.arguments is not None:
            answer = await self.api.get_async_httpx_client().request(**operation._get_kwargs(**pages.arguments))
            for item in pages.read(answer):
                yield item

    def close(self) -> None:
        self.api.get_httpx_client().close()

    async def aclose(self) -> None:
        await self.api.get_async_httpx_client().aclose()

    def __enter__(self) -> AffiliateClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    async def __aenter__(self) -> AffiliateClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()


def _result(operation: ModuleType, api: AuthenticatedClient, response: httpx.Response) -> Any:
    """The parsed answer, or the ApiError its status names.

    The generated code (``sync_detailed``) reads an error body as JSON before anyone can look at the
    status, so an HTML 502 from a proxy would be a JSONDecodeError; the status is checked here first,
    and the generated parser reads successes only. An answer it cannot read (a CSV export of a list
    the document describes as JSON) comes back as its text.
    """
    if response.status_code >= 400:
        raise error_for(response.status_code, response.content, response.headers)
    try:
        parsed = operation._build_response(client=api, response=response).parsed
    except ValueError:
        if "json" in response.headers.get("content-type", ""):
            raise
        parsed = None
    if parsed is not None:
        return parsed
    if not response.content:
        return None
    if "json" in response.headers.get("content-type", ""):
        return json.loads(response.content)
    return response.text


class _Pages:
    """Where a walk over a list is: the arguments of the next page's request, None after the last."""

    def __init__(self, operation: ModuleType, api: AuthenticatedClient, limit: int | None, filters: dict[str, Any]):
        self._operation = operation
        self._api = api
        self._paged = "starting_after" in inspect.signature(operation.sync_detailed).parameters
        cursor = filters.pop("starting_after", UNSET)
        self._filters = {**filters, "limit": UNSET if limit is None else limit} if self._paged else filters
        self.arguments: dict[str, Any] | None = {**self._filters, "starting_after": cursor} if self._paged else self._filters

    def read(self, response: httpx.Response) -> list[Any]:
        page = _result(self._operation, self._api, response)
        if not isinstance(page, list):
            raise TypeError(f"{self._operation.__name__} answered one object, not a list: iterate over a list without an id filter")
        cursor = next_cursor(response.headers.get("link")) if self._paged else None
        self.arguments = None if cursor is None else {**self._filters, "starting_after": cursor}
        return page


def _version() -> str:
    try:
        return version("affiliate-client")
    except PackageNotFoundError:  # run from a source tree, not installed
        return "0+unknown"
