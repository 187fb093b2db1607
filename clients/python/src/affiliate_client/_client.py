"""The client integrators hold: the generated operations, called with retries, typed errors and paging."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Iterator
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from ._errors import error_for
from ._retry import RetryingTransport, RetryPolicy
from .generated.client import AuthenticatedClient
from .generated.types import UNSET, Response

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
    ):
        self._transport = RetryingTransport(transport or httpx.HTTPTransport(), retry or RetryPolicy())
        #: The generated client, for calling a generated operation's functions directly.
        self.api = AuthenticatedClient(
            base_url=base_url.rstrip("/"),
            token=api_key,
            timeout=httpx.Timeout(timeout),
            raise_on_unexpected_status=False,
            httpx_args={"transport": self._transport},
        )

    def call(self, operation: ModuleType, **arguments: Any) -> Any:
        """Runs a generated operation; returns its parsed answer, or raises the ApiError its status names."""
        return self._result(operation.sync_detailed(client=self.api, **arguments))

    def iterate(self, operation: ModuleType, *, limit: int | None = None, **filters: Any) -> Iterator[Any]:
        """Every item of a list operation, page after page, following the Link header's next page.

        ``limit`` is the page size (the platform's default when None); ``filters`` are the
        operation's other query parameters, kept on every page.
        """
        cursor = filters.pop("starting_after", UNSET)
        paged = "starting_after" in inspect.signature(operation.sync_detailed).parameters
        if paged:
            filters["limit"] = UNSET if limit is None else limit
        while True:
            # A list without paging (the event types, the publishable keys) is one page.
            response = operation.sync_detailed(client=self.api, **({**filters, "starting_after": cursor} if paged else filters))
            page = self._result(response)
            if not isinstance(page, list):
                raise TypeError(f"{operation.__name__} answered one object, not a list: iterate over a list operation without an id filter")
            yield from page
            cursor = next_cursor(response.headers.get("link")) if paged else None
            if cursor is None:
                return

    def close(self) -> None:
        self.api.get_httpx_client().close()

    def __enter__(self) -> AffiliateClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @staticmethod
    def _result(response: Response[Any]) -> Any:
        status = int(response.status_code)
        if status >= 400:
            raise error_for(status, response.content, response.headers)
        if response.parsed is not None:
            return response.parsed
        # An answer the generated code has no model for (a 204, or a CSV export): its text or JSON.
        content_type = response.headers.get("content-type", "")
        if not response.content:
            return None
        if "json" in content_type:
            return json.loads(response.content)
        return response.content.decode("utf-8")
