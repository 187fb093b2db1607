"""Retries and idempotency keys, against a local HTTP server that answers as it is told."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from affiliate_client import AffiliateClient, RetryPolicy, ServerError
from affiliate_client.generated.api.sales import get_sales


class Script:
    """The answers to give, in order ((status, headers[, body]) or "drop" to close the connection unanswered), and the requests seen."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, dict[str, str]] | tuple[int, dict[str, str], bytes] | str] = []
        self.seen: list[tuple[str, str | None]] = []


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.seen_request()
            answer = script.answers.pop(0) if script.answers else (201, {})
            if answer == "drop":
                self.close_connection = True
                self.connection.shutdown(2)
                return
            status, headers, *rest = answer
            body = rest[0] if rest else b"{}"
            self.send_response(status)
            for name, value in {"content-type": "application/json", **headers, "content-length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def seen_request(self) -> None:
            script.seen.append((self.command, self.headers.get("idempotency-key")))

        do_GET = do_POST = do_PUT = answer  # noqa: N815 (http.server's names)

        def log_message(self, *_: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}", script
    httpd.shutdown()


def client_of(url: str) -> httpx.Client:
    return AffiliateClient(url, "ak_test", retry=RetryPolicy(initial_backoff=0.01, max_backoff=0.02)).api.get_httpx_client()


def test_a_post_gets_an_idempotency_key_that_its_retries_on_429_and_503_send_again(server):
    url, script = server
    script.answers = [(429, {"retry-after": "0"}), (503, {}), (201, {})]
    assert client_of(url).post("/api/v1/sales", json={"totalEarned": 1}).status_code == 201
    keys = [key for _, key in script.seen]
    assert len(keys) == 3 and keys[0] and len(set(keys)) == 1


def test_a_key_the_caller_chose_is_kept_and_each_post_gets_its_own(server):
    url, script = server
    client = client_of(url)
    client.post("/a", json={}, headers={"Idempotency-Key": "mine"})
    client.post("/a", json={})
    client.post("/a", json={})
    keys = [key for _, key in script.seen]
    assert keys[0] == "mine" and keys[1] != keys[2]


def test_the_wait_is_the_retry_after_the_platform_sent(server, caplog):
    url, script = server
    script.answers = [(503, {"retry-after": "1"})]
    with caplog.at_level(logging.INFO, logger="affiliate_client"):
        assert client_of(url).get("/api/v1/sales").status_code == 201
    assert [(record.cause, record.delay) for record in caplog.records] == [("503", 1.0)]


def test_a_retry_after_beyond_the_policy_is_not_waited_for_and_retries_stop_at_max_retries(server):
    url, script = server
    script.answers = [(429, {"retry-after": "3600"})]
    assert client_of(url).get("/a").status_code == 429
    script.seen.clear()
    script.answers = [(503, {"retry-after": "0"})] * 5
    assert client_of(url).get("/a").status_code == 503
    assert len(script.seen) == 4  # the request and its 3 retries


def test_a_lost_connection_is_retried_for_a_post_with_its_key_but_not_for_a_put_without_one(server):
    url, script = server
    script.answers = ["drop", (201, {})]
    assert client_of(url).post("/a", json={}).status_code == 201
    assert len(script.seen) == 2 and script.seen[0][1] == script.seen[1][1]
    script.seen.clear()
    script.answers = ["drop"]
    with pytest.raises(httpx.TransportError):
        client_of(url).put("/a", json={})
    assert len(script.seen) == 1


def test_other_errors_are_not_retried(server):
    url, script = server
    script.answers = [(400, {}), (409, {})]
    client = client_of(url)
    assert client.post("/a", json={}).status_code == 400
    assert client.post("/a", json={}).status_code == 409
    assert len(script.seen) == 2


def test_the_async_client_retries_too_with_one_key_per_post(server):
    url, script = server
    script.answers = [(503, {"retry-after": "0"}), (201, {})]

    async def post() -> int:
        async with AffiliateClient(url, "ak_test", retry=RetryPolicy(initial_backoff=0.01, max_backoff=0.02)) as client:
            return (await client.api.get_async_httpx_client().post("/api/v1/sales", json={})).status_code

    assert asyncio.run(post()) == 201
    keys = [key for _, key in script.seen]
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1]


def test_an_answer_the_generated_parser_cannot_read_still_gives_a_typed_error_or_its_text(server):
    url, script = server
    client = AffiliateClient(url, "ak_test")
    script.answers = [(502, {"content-type": "text/html"}, b"<html>Bad gateway</html>")]
    with pytest.raises(ServerError) as raised:
        client.call(get_sales)
    assert (raised.value.status, raised.value.message) == (502, "<html>Bad gateway</html>")
    script.answers = [(200, {"content-type": "text/csv"}, b"id,totalEarned\ns1,100\n")]
    assert client.call(get_sales) == "id,totalEarned\ns1,100\n"
