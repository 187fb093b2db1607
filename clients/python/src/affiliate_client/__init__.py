"""Python client of the affiliate platform's API.

``affiliate_client.generated`` is generated from the OpenAPI document by openapi-python-client;
this package adds what an integrator should not have to write: retries that honour Retry-After,
an Idempotency-Key on every POST, iteration over every page of a list, typed errors, and
Standard Webhooks verification.
"""

from ._client import AffiliateClient, _version, next_cursor
from ._errors import (
    ApiError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
)
from ._retry import AsyncRetryingTransport, RetryingTransport, RetryPolicy
from ._webhooks import WebhookFailure, WebhookVerificationError, sign_webhook, verify_webhook

__version__ = _version()

__all__ = [
    "AffiliateClient",
    "ApiError",
    "AsyncRetryingTransport",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "RetryPolicy",
    "RetryingTransport",
    "ServerError",
    "WebhookFailure",
    "WebhookVerificationError",
    "__version__",
    "next_cursor",
    "sign_webhook",
    "verify_webhook",
]
