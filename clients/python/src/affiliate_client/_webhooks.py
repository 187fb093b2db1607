"""Standard Webhooks verification (https://www.standardwebhooks.com), with the standard library only.

The signed content is ``<webhook-id>.<webhook-timestamp>.<raw body>``, signed with HMAC-SHA256 under
the base64 part of the ``whsec_…`` secret; the webhook-signature header holds one ``v1,<base64>`` per
secret, space separated (several during a rotation). contracts/src/webhook-signature.ts is the
platform's side of the same rules.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import re
import time
from collections.abc import Iterable, Mapping
from hashlib import sha256
from typing import Any, Literal

SECRET_PREFIX = "whsec_"
#: How far webhook-timestamp may be from this machine's clock: older messages are replays.
TOLERANCE_SECONDS = 5 * 60


#: Why a webhook was refused, as the TypeScript SDK names it (its ``WebhookFailure``):
#: ``MALFORMED_HEADER``: webhook-id, webhook-timestamp or webhook-signature missing or not in the
#: Standard Webhooks form; ``TIMESTAMP_SKEW``: webhook-timestamp further from this clock than the
#: tolerance (a replay, or a clock out of sync); ``SIGNATURE_MISMATCH``: no v1 signature matches (the
#: body is not the bytes sent, often parsed and serialised again, or the secret is not this
#: endpoint's); ``MALFORMED_BODY``: the signature matches but the body is not JSON.
WebhookFailure = Literal["MALFORMED_HEADER", "TIMESTAMP_SKEW", "SIGNATURE_MISMATCH", "MALFORMED_BODY"]


class WebhookVerificationError(Exception):
    """The webhook is not one the platform signed with this secret (or it is too old to trust).

    ``failure`` says why (a ``WebhookFailure``), for a receiver to log something actionable.
    """

    def __init__(self, failure: WebhookFailure, message: str) -> None:
        super().__init__(message)
        self.failure: WebhookFailure = failure


def _header(headers: Mapping[str, str] | Iterable[tuple[str, str]], name: str) -> str | None:
    # Dicts of any case, http.server's message objects and httpx's Headers all give (name, value) pairs.
    pairs = headers.items() if isinstance(headers, Mapping) or hasattr(headers, "items") else headers
    for key, value in pairs:  # type: ignore[union-attr]
        if key.lower() == name:
            return value
    return None


def _key(secret: str) -> bytes:
    encoded = secret[len(SECRET_PREFIX) :] if secret.startswith(SECRET_PREFIX) else secret
    # A wrong secret is this receiver's configuration, not the message's fault: a ValueError (as the
    # TypeScript SDK's TypeError), so that it is not answered as a refused webhook.
    try:
        key = base64.b64decode(encoded, validate=True)
    except binascii.Error as error:
        raise ValueError("The signing secret is not base64: use the endpoint's whsec_… value") from error
    if not key:
        raise ValueError("The signing secret is empty: use the endpoint's whsec_… value")
    return key


def sign_webhook(secret: str, webhook_id: str, timestamp: int, payload: bytes | str) -> str:
    """``v1,<signature>`` as the platform sends it: for tests of a receiver."""
    body = payload.encode() if isinstance(payload, str) else payload
    digest = hmac.new(_key(secret), f"{webhook_id}.{timestamp}.".encode() + body, sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def verify_webhook(
    payload: bytes | str,
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    secret: str | Iterable[str],
    *,
    tolerance_seconds: int = TOLERANCE_SECONDS,
    now: float | None = None,
) -> Any:
    """Checks a received webhook and returns its parsed body; raises WebhookVerificationError otherwise.

    ``payload`` must be the body exactly as received: a body parsed and serialised again no longer
    matches its signature. ``secret`` may be several secrets (during a rotation): a valid ``v1``
    signature under any of them passes.
    """
    webhook_id = _header(headers, "webhook-id")
    timestamp_text = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not webhook_id or not timestamp_text or not signatures:
        raise WebhookVerificationError("MALFORMED_HEADER", "Missing webhook-id, webhook-timestamp or webhook-signature header")
    if not re.fullmatch(r"\d{1,15}", timestamp_text):
        raise WebhookVerificationError("MALFORMED_HEADER", "webhook-timestamp is not a number of seconds")
    timestamp = int(timestamp_text)
    if abs(int(time.time() if now is None else now) - timestamp) > tolerance_seconds:
        raise WebhookVerificationError("TIMESTAMP_SKEW", "webhook-timestamp is outside the tolerance: the message is too old or too new")
    presented = [entry.split(",", 1)[1] for entry in signatures.split(" ") if entry.startswith("v1,")]
    if not presented:
        raise WebhookVerificationError("MALFORMED_HEADER", "webhook-signature holds no v1 signature")
    secrets = [secret] if isinstance(secret, str) else list(secret)
    expected = [sign_webhook(candidate, webhook_id, timestamp, payload).split(",", 1)[1] for candidate in secrets]
    if not any(hmac.compare_digest(mine.encode(), theirs.encode()) for mine in expected for theirs in presented):
        raise WebhookVerificationError(
            "SIGNATURE_MISMATCH",
            "No webhook-signature matches the body: check that it is the raw bytes received"
            " (not parsed and serialised again) and that the secret is this endpoint's",
        )
    try:
        return json.loads(payload)
    except ValueError as error:
        raise WebhookVerificationError("MALFORMED_BODY", "The body is signed but is not JSON") from error
