"""The integrator's journey with the installed wheel, against a running system.

Run by clients/python/test/python-sdk.test.ts with the gateway's URL and an API key of a program
whose rate limit is one request per route every few seconds, so that the client meets real 429s.
Prints one JSON line of what it saw; any broken expectation is an AssertionError (exit 1).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import affiliate_client
from affiliate_client import AffiliateClient, BadRequestError, WebhookVerificationError, verify_webhook
from affiliate_client.generated.api.affiliates import create_affiliate
from affiliate_client.generated.api.coupons import create_coupon
from affiliate_client.generated.api.promotional_codes import create_promotional_code
from affiliate_client.generated.api.sales import create_sale, get_sales
from affiliate_client.generated.api.webhooks import create_webhook_endpoint
from affiliate_client.generated.models import (
    CreateAffiliateBody,
    CreateCouponBody,
    CreatePromotionalCodeBody,
    CreateSaleBody,
    CreateWebhookEndpointBody,
)

received: list[tuple[dict[str, str], bytes]] = []


class Receiver(BaseHTTPRequestHandler):
    """A webhook subscriber as an integrator writes one: it keeps the raw body for verification."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        received.append((dict(self.headers.items()), raw))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


class Retries(logging.Handler):
    """What the client logs of its retries (the affiliate_client logger, INFO)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def eventually(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found:
            return found
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.2)


def main() -> None:
    gateway_url, api_key = os.environ["AFFILIATE_GATEWAY_URL"], os.environ["AFFILIATE_API_KEY"]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    retries = Retries()
    logging.getLogger("affiliate_client").addHandler(retries)
    logging.getLogger("affiliate_client").setLevel(logging.INFO)

    with AffiliateClient(gateway_url, api_key) as client:
        endpoint = client.call(
            create_webhook_endpoint,
            body=CreateWebhookEndpointBody(url=f"http://127.0.0.1:{server.server_port}/hooks", event_types=["sale.created"]),
        )
        affiliate = client.call(create_affiliate, body=CreateAffiliateBody(first_name="Ada", last_name="Byron", email="ada@example.com"))
        coupon = client.call(create_coupon, body=CreateCouponBody(name="Spring", percent_off=20))
        code_text = f"PY{uuid.uuid4().hex[:8].upper()}"
        code = client.call(
            create_promotional_code, body=CreatePromotionalCodeBody(coupon_id=coupon.id, code=code_text, affiliate_id=affiliate.id)
        )
        assert code.code == code_text and str(code.coupon.id) == str(coupon.id), code

        # Three sales at once on a route that allows one every 2 s: two of them meet 429s, which the
        # client waits out (Retry-After) and resends with the same Idempotency-Key.
        bodies = {
            f"sale-{amount}": CreateSaleBody(promo_code=code_text.lower(), total_earned=amount, external_id=f"pay_{uuid.uuid4().hex[:8]}")
            for amount in (100, 49.5, 12)
        }
        created: dict[str, Any] = {}

        def record_sale(name: str) -> None:
            created[name] = client.call(create_sale, body=bodies[name])

        threads = [threading.Thread(target=record_sale, args=(name,), name=name) for name in bodies]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(created) == sorted(bodies), created
        sales = list(created.values())
        assert all(str(sale.affiliate_id) == str(affiliate.id) for sale in sales), sales
        keys_by_sale = {}
        for name in bodies:
            keys = {record.idempotency_key for record in retries.records if record.threadName == name}
            if keys:
                keys_by_sale[created[name].id] = (keys, bodies[name])
        rate_limited = [record for record in retries.records if record.cause == "429"]
        assert rate_limited, "no request met a 429: the program's rate limit should have been reached"
        assert all(record.delay <= 5 for record in rate_limited), [record.delay for record in rate_limited]
        assert keys_by_sale, "no POST /api/v1/sales was retried"
        for sale_id, (keys, body) in keys_by_sale.items():
            assert len(keys) == 1 and None not in keys, f"one Idempotency-Key across the retries of one POST: {keys}"
            # The platform ran the retried request under that key: sending it again replays that sale.
            replay = create_sale.sync_detailed(client=client.api, body=body, idempotency_key=next(iter(keys)))
            assert replay.status_code == 201 or replay.status_code == 200, (replay.status_code, replay.content)
            assert replay.headers.get("idempotent-replayed") == "true", dict(replay.headers)
            assert replay.parsed.id == sale_id, (replay.parsed.id, sale_id)

        # Auto-paging: one sale a page, so three pages, following the Link header; then with asyncio.
        listed = list(client.iterate(get_sales, limit=1))
        assert sorted(str(sale.id) for sale in listed) == sorted(str(sale.id) for sale in sales), listed
        one_page = client.call(get_sales, limit=1)
        assert len(one_page) == 1, one_page
        by_affiliate = list(client.iterate(get_sales, limit=2, affiliate_id=str(affiliate.id)))
        assert len(by_affiliate) == 3, by_affiliate

        async def every_sale_async() -> list[Any]:
            listed_async = [sale async for sale in client.iterate_async(get_sales, limit=2)]
            await client.aclose()
            return listed_async

        assert sorted(str(sale.id) for sale in asyncio.run(every_sale_async())) == sorted(str(sale.id) for sale in sales)

        # A typed error, with what to quote to support.
        try:
            client.call(create_coupon, body=CreateCouponBody(name="Too generous", percent_off=150))
            raise AssertionError("a 150 % coupon was accepted")
        except BadRequestError as error:
            assert error.status == 400 and error.message, error
            assert error.request_id and error.request_id == error.headers.get("x-request-id"), error
            assert error.code == error.body.get("code") and error.param == error.body.get("param"), error

        # The webhook the system delivered to this subscriber, verified with the endpoint's secret.
        delivery = eventually(
            lambda: next(((headers, raw) for headers, raw in received if json.loads(raw)["event"] == "sale.created"), None),
            30,
            "a sale.created delivery",
        )
        headers, raw = delivery
        event = verify_webhook(raw, headers, endpoint.secret)
        assert event["event"] == "sale.created" and event["id"] == headers["webhook-id"], event
        assert event["data"]["id"] in {str(sale.id) for sale in sales}, event
        for tampered, secret in ((raw.replace(b"sale.created", b"sale.deleted"), endpoint.secret), (raw, "whsec_" + "QUJD" * 8)):
            try:
                verify_webhook(tampered, headers, secret)
                raise AssertionError("a tampered webhook or a wrong secret passed verification")
            except WebhookVerificationError:
                pass

    server.shutdown()
    print(
        json.dumps(
            {
                "version": affiliate_client.__version__,
                "sales": len(sales),
                "listed": len(listed),
                "rateLimitedRetries": len(rate_limited),
                "verifiedEvent": event["event"],
            }
        )
    )


if __name__ == "__main__":
    main()
    sys.exit(0)
