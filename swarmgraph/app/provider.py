"""The CLI's real model (an OpenAI-compatible server) and its errors in words a person can act on.

A failed model call names the URL that failed (password and query string removed), says when a
5xx is being retried and how many tries are left, and calls a reply that is not a chat
completion a malformed response, instead of LangChain's "No generations found in stream".

Example:
    >>> endpoint_text("https://bob:secret@llm.example/v1/chat/completions?key=abc")
    'https://bob:***@llm.example/v1/chat/completions'
    >>> describe_model_error(ValueError("No generations found in stream."), "http://h:1/v1")
    'the model server at http://h:1/v1 sent a malformed response (not an OpenAI chat completion)'
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["RETRIES", "describe_model_error", "endpoint_text", "server_chat_model"]

#: How many times a 429/5xx answer or a dropped connection is retried (openai's own backoff).
RETRIES = 2

# Errors LangChain and openai raise when a 200 answer is not a chat completion.
_MALFORMED = (
    "no generations found in stream",
    "expecting value",  # json.JSONDecodeError from a non-JSON body
    "unexpected response type",  # langchain-openai: the body was not JSON at all
    "null value for 'choices'",  # langchain-openai: JSON, but no completion in it
)


def endpoint_text(url: Any) -> str:
    """``url`` for a message: the password becomes ``***``, a query string (keys) is dropped."""
    from ..memory.urls import redact_url

    return redact_url(str(url).split("?", 1)[0].split("#", 1)[0])


def _say(text: str) -> None:
    print(f"swarmgraph: {text}", file=sys.stderr, flush=True)


def _retry_notice(say: Callable[[str], None], retries: int) -> Callable[[Any], None]:
    """An httpx response hook: one line on every 429/5xx answer openai is about to retry."""

    def hook(response: Any) -> None:
        status = response.status_code
        if status != 429 and status < 500:
            return
        try:
            taken = int(response.request.headers.get("x-stainless-retry-count", "0"))
        except ValueError:
            taken = 0
        where = endpoint_text(response.request.url)
        if taken < retries:
            say(
                f"the model server at {where} answered HTTP {status}; retrying "
                f"({taken + 1} of {retries} retries)"
            )

    return hook


def server_chat_model(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    retries: int = RETRIES,
    say: Callable[[str], None] = _say,
) -> Any:
    """``ChatOpenAI`` for ``model`` that reports each retry through ``say`` (stderr by default).

    ``base_url``/``api_key`` default to ``OPENAI_BASE_URL``/``OPENAI_API_KEY``; a local server
    without a key gets a placeholder key (the openai client refuses to start without one).

    Example:
        >>> chat = server_chat_model("llama3.1", base_url="http://127.0.0.1:9/v1", api_key="x")
        >>> chat.model_name, chat.max_retries
        ('llama3.1', 2)
    """
    import openai
    from langchain_openai import ChatOpenAI

    base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    api_key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
    http_client = openai.DefaultHttpxClient(event_hooks={"response": [_retry_notice(say, retries)]})
    kwargs: dict[str, Any] = {"model": model, "api_key": api_key, "max_retries": retries}
    if base_url:
        kwargs["base_url"] = base_url
    return ChatOpenAI(http_client=http_client, **kwargs)


def describe_model_error(error: BaseException, base_url: str | None) -> str | None:
    """One line for a failed model call, or ``None`` when ``error`` is not about the server.

    Example:
        >>> describe_model_error(KeyError("x"), None) is None
        True
    """
    import openai

    where = endpoint_text(base_url or "https://api.openai.com/v1")
    request = getattr(error, "request", None)
    url = getattr(request, "url", None)
    if url is not None:
        where = endpoint_text(url)
    tries = f"{RETRIES + 1} attempts"
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        body = getattr(error, "body", None)
        detail = body.get("message") if isinstance(body, dict) else None
        detail = detail or _short(getattr(error, "message", "") or "")
        hint = {
            401: "check OPENAI_API_KEY",
            403: "the key may not have access to this model",
            404: "check the model name and OPENAI_BASE_URL (it usually ends in /v1)",
            429: "rate limited or out of quota",
        }.get(status, "")
        after = f" after {tries}" if status == 429 or status >= 500 else ""
        text = f"the model server at {where} answered HTTP {status}{after}"
        return text + "".join(f"; {part}" for part in (_short(detail), hint) if part)
    if isinstance(error, openai.APITimeoutError):
        return f"the model server at {where} did not answer in time ({tries})"
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__ or error.__context__
        reason = f" ({_short(str(cause))})" if cause else ""
        return f"cannot reach the model server at {where}{reason} after {tries}"
    if isinstance(error, openai.APIResponseValidationError) or (
        isinstance(error, (ValueError, TypeError))
        and any(token in str(error).lower() for token in _MALFORMED)
    ):
        return (
            f"the model server at {where} sent a malformed response (not an OpenAI chat completion)"
        )
    return None


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
