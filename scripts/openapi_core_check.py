"""Validates recorded HTTP answers against an OpenAPI document with openapi-core.

Input: the document (JSON) and a JSON list of {method, url, status, headers, text}.
Output: one line per answer the document does not describe; exit status 1 if there is any.
"""
import json
import sys
from urllib.parse import parse_qs, urlsplit

from openapi_core import Config, OpenAPI
from openapi_core.testing import MockRequest, MockResponse


def main(document_path: str, exchanges_path: str) -> int:
    with open(document_path, encoding="utf-8") as handle:
        # CSV answers are text: openapi-core knows JSON, forms and plain text, not text/csv.
        config = Config(extra_media_type_deserializers={"text/csv": lambda data: data.decode("utf-8")})
        openapi = OpenAPI.from_dict(json.load(handle), config=config)
    with open(exchanges_path, encoding="utf-8") as handle:
        exchanges = json.load(handle)
    problems = []
    for exchange in exchanges:
        url = urlsplit(exchange["url"])
        query = {name: values[0] for name, values in parse_qs(url.query).items()}
        headers = {name.lower(): value for name, value in exchange["headers"].items()}
        content_type = headers.get("content-type", "application/json").split(";")[0].strip()
        request = MockRequest(f"{url.scheme}://{url.netloc}", exchange["method"].lower(), url.path, args=query)
        response = MockResponse(exchange["text"].encode("utf-8"), status_code=exchange["status"], headers=headers, content_type=content_type)
        try:
            openapi.validate_response(request, response)
        except Exception as error:  # every kind of mismatch is reported the same way
            problems.append(f"{exchange['method']} {url.path} -> {exchange['status']}: {type(error).__name__}: {error}")
    for problem in problems:
        print(problem)
    print(f"openapi-core: {len(exchanges)} answers, {len(problems)} not as documented", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
