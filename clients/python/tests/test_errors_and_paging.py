"""Typed errors and the Link header, as the platform sends them."""

import importlib
import inspect
import pkgutil

import httpx

from affiliate_client import ApiError, BadRequestError, ConflictError, RateLimitError, ServerError, next_cursor
from affiliate_client._errors import error_for


def test_a_coded_400_carries_code_param_and_the_request_id_of_its_body():
    body = b'{"error":"percentOff must be at most 100","code":"parameter_invalid","param":"percentOff","requestId":"req_1"}'
    error = error_for(400, body, httpx.Headers({"x-request-id": "req_1"}))
    assert isinstance(error, BadRequestError)
    assert (error.status, error.message, error.code, error.param, error.request_id) == (
        400,
        "percentOff must be at most 100",
        "parameter_invalid",
        "percentOff",
        "req_1",
    )
    assert "parameter_invalid" in str(error) and "req_1" in str(error)


def test_the_numbered_error_shape_gives_its_message_and_the_header_gives_the_request_id():
    error = error_for(409, b'{"error":409,"message":"The coupon has codes"}', httpx.Headers({"X-Request-Id": "req_2"}))
    assert isinstance(error, ConflictError)
    assert (error.message, error.code, error.param, error.request_id) == ("The coupon has codes", None, None, "req_2")


def test_each_status_has_its_class_and_every_one_is_an_api_error():
    assert isinstance(error_for(429, b'{"error":"Rate limit exceeded"}', httpx.Headers()), RateLimitError)
    assert isinstance(error_for(503, b"", httpx.Headers()), ServerError)
    teapot = error_for(418, b"not json", httpx.Headers())
    assert type(teapot) is ApiError and teapot.message == "not json"


def test_the_next_cursor_is_the_starting_after_of_the_rel_next_link():
    link = '</api/v1/sales?affiliateId=a1&limit=2&startingAfter=0f7c%2B1>; rel="next"'
    assert next_cursor(link) == "0f7c+1"
    assert next_cursor(None) is None
    assert next_cursor('</api/v1/sales?startingAfter=x>; rel="prev"') is None


def generated_operations():
    import affiliate_client.generated.api as api

    names = [name for _, name, is_package in pkgutil.walk_packages(api.__path__, f"{api.__name__}.") if not is_package]
    return [importlib.import_module(name) for name in names]


def test_every_generated_operation_imports_and_has_the_functions_the_client_calls():
    operations = generated_operations()
    assert len(operations) >= 50
    # AffiliateClient sends _get_kwargs's request itself and has _build_response read a success.
    functions = ("sync_detailed", "asyncio_detailed", "_get_kwargs", "_build_response")
    assert [operation.__name__ for operation in operations if not all(hasattr(operation, name) for name in functions)] == []


def test_every_paged_list_of_the_document_takes_limit_and_starting_after_as_iterate_passes_them():
    paged = [operation for operation in generated_operations() if "starting_after" in inspect.signature(operation.sync_detailed).parameters]
    assert len(paged) >= 10, [operation.__name__ for operation in paged]
    assert [operation.__name__ for operation in paged if "limit" not in inspect.signature(operation.sync_detailed).parameters] == []
