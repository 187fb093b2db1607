"""verify_webhook: the Standard Webhooks rules a receiver depends on."""

import base64
import time

import pytest

from affiliate_client import WebhookVerificationError, sign_webhook, verify_webhook

SECRET = "whsec_" + base64.b64encode(b"a secret of thirty-two bytes....").decode()
BODY = b'{"id":"msg_1","event":"sale.created","createdAt":"2026-01-01T00:00:00Z","data":{"id":"s1"}}'


def signed(body: bytes = BODY, secret: str = SECRET, timestamp: int | None = None) -> dict[str, str]:
    moment = int(time.time()) if timestamp is None else timestamp
    return {"Webhook-Id": "msg_1", "Webhook-Timestamp": str(moment), "Webhook-Signature": sign_webhook(secret, "msg_1", moment, body)}


def test_a_body_signed_with_the_secret_verifies_and_comes_back_parsed():
    assert verify_webhook(BODY, signed(), SECRET)["data"] == {"id": "s1"}


def test_the_signed_content_is_id_dot_timestamp_dot_body_under_the_base64_key():
    # Computed independently of sign_webhook: HMAC-SHA256 of "<id>.<timestamp>.<body>".
    import hashlib
    import hmac

    key = base64.b64decode(SECRET.removeprefix("whsec_"))
    digest = base64.b64encode(hmac.new(key, b"msg_1.1700000000." + BODY, hashlib.sha256).digest()).decode()
    headers = {"webhook-id": "msg_1", "webhook-timestamp": "1700000000", "webhook-signature": f"v1,{digest}"}
    assert verify_webhook(BODY, headers, SECRET, now=1700000000)["id"] == "msg_1"


def test_a_re_serialized_or_altered_body_fails():
    with pytest.raises(WebhookVerificationError, match="No webhook-signature matches"):
        verify_webhook(BODY.replace(b'"s1"', b'"s2"'), signed(), SECRET)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(BODY.replace(b",", b", "), signed(), SECRET)


def test_another_secret_fails_and_any_of_several_secrets_passes_during_a_rotation():
    other = "whsec_" + base64.b64encode(b"another secret, thirty-two bytes").decode()
    with pytest.raises(WebhookVerificationError):
        verify_webhook(BODY, signed(), other)
    assert verify_webhook(BODY, signed(), [other, SECRET])["event"] == "sale.created"


def test_one_valid_signature_among_several_in_the_header_passes():
    headers = signed()
    headers["Webhook-Signature"] = "v1,bm90IGl0 " + headers["Webhook-Signature"]
    assert verify_webhook(BODY, headers, SECRET)["id"] == "msg_1"


def test_a_message_older_or_newer_than_five_minutes_is_refused_as_a_replay():
    with pytest.raises(WebhookVerificationError, match="tolerance"):
        verify_webhook(BODY, signed(timestamp=int(time.time()) - 301), SECRET)
    with pytest.raises(WebhookVerificationError, match="tolerance"):
        verify_webhook(BODY, signed(timestamp=int(time.time()) + 301), SECRET)


def test_missing_or_malformed_headers_are_refused():
    headers = signed()
    del headers["Webhook-Signature"]
    with pytest.raises(WebhookVerificationError, match="Missing"):
        verify_webhook(BODY, headers, SECRET)
    with pytest.raises(WebhookVerificationError, match="number of seconds"):
        verify_webhook(BODY, {**signed(), "Webhook-Timestamp": "soon"}, SECRET)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(BODY, {**signed(), "Webhook-Signature": "v1,é"}, SECRET)


def failure_of(payload: bytes, headers: dict[str, str]) -> str:
    with pytest.raises(WebhookVerificationError) as refused:
        verify_webhook(payload, headers, SECRET)
    return refused.value.failure


def test_each_refusal_names_its_failure_as_the_typescript_sdk_does():
    without_signature = {name: value for name, value in signed().items() if name != "Webhook-Signature"}
    assert failure_of(BODY, without_signature) == "MALFORMED_HEADER"
    assert failure_of(BODY, {**signed(), "Webhook-Timestamp": "soon"}) == "MALFORMED_HEADER"
    assert failure_of(BODY, {**signed(), "Webhook-Signature": "v2,bm90IGl0"}) == "MALFORMED_HEADER"
    assert failure_of(BODY, signed(timestamp=int(time.time()) - 301)) == "TIMESTAMP_SKEW"
    assert failure_of(BODY.replace(b",", b", "), signed()) == "SIGNATURE_MISMATCH"
    assert failure_of(b"not json", signed(body=b"not json")) == "MALFORMED_BODY"


def test_a_secret_that_is_not_a_whsec_value_is_a_configuration_error_not_a_refused_webhook():
    with pytest.raises(ValueError, match="not base64"):
        verify_webhook(BODY, signed(), "whsec_not base64!")
