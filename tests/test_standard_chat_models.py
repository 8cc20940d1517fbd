"""LangChain's own standard tests (``langchain-tests``) on our two chat models.

``ChatModelUnitTests`` run on ``ScriptedChatModel`` and ``OpenAIClientChatModel``; the
``ChatModelIntegrationTests`` run on ``OpenAIClientChatModel`` over ``openai.OpenAI`` and the
loopback OpenAI stub (tests/openai_stub.py), answered by a rule that reads each request the
way a cooperative model would (an offline stand-in, not a model). A standard test that does
not pass here is overridden by name with its reason, and the reason is checked:

* a test that runs offline but fails for a known reason runs for real as a strict xfail
  that must raise that reason's exception (the multimodal tests download their own image,
  PDF or audio file from the internet; here the network beyond loopback is refused, so they
  must fail on exactly that refusal, and an xpass or any other error fails the run);
* a test that would only skip, or only time something, is replaced by a check of its
  reason that then raises ``NotApplicable``, a strict xfail of that exception.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import os
import re
import socket
import textwrap
from typing import Any
from unittest import mock

import openai
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.load import dumpd
from langchain_core.messages import HumanMessage
from langchain_tests.integration_tests import ChatModelIntegrationTests
from langchain_tests.unit_tests import ChatModelUnitTests
from openai_stub import OpenAIStub, StubReply
from swarmgraph.graph.chat_models.openai_client import OpenAIClientChatModel, wire_messages
from swarmgraph.graph.chat_models.scripted import ScriptedChatModel


class DownloadRefused(Exception):
    """A standard test tried to reach a host other than loopback (not an OSError, so httpx
    passes it through unwrapped and a strict xfail can name it)."""


_LOOPBACK = ("127.0.0.1", "localhost", "::1")


@pytest.fixture
def loopback_only(monkeypatch):
    """Refuse every name lookup but loopback's: what a download needs first."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in _LOOPBACK:
            raise DownloadRefused(f"tests use no network but loopback: {host}")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    # langchain-tests warns when a download would go without one (none goes out here)
    monkeypatch.setenv("LANGCHAIN_TESTS_USER_AGENT", "swarmgraph-tests (offline)")


def _downloads_its_fixture(name: str) -> Any:
    """The standard test ``name``, run for real with the network refused: it must fail on
    the download of its own fixture (strict: passing, or failing otherwise, is an error)."""
    standard = getattr(ChatModelIntegrationTests, name)

    @pytest.mark.usefixtures("loopback_only")
    @pytest.mark.xfail(
        reason="downloads its own fixture file from the internet; tests use loopback only",
        raises=DownloadRefused,
        strict=True,
    )
    def test(self: Any, model: BaseChatModel) -> None:
        standard(self, model)

    test.__name__ = name
    return test


class NotApplicable(Exception):
    """Raised by an excluded test once it has checked that its reason is still true."""


def _excluded_because(reason: str) -> Any:
    """Exclude a standard test by name: the decorated check of ``reason`` runs for real,
    then the test ends in ``NotApplicable``, a strict xfail (langchain-tests' way of
    listing an override by name). A check that fails is an ordinary failure."""

    def wrap(check: Any) -> Any:
        @functools.wraps(check)
        def test(*args: Any, **kwargs: Any) -> None:
            check(*args, **kwargs)
            raise NotApplicable(reason)

        return pytest.mark.xfail(reason=reason, raises=NotApplicable, strict=True)(test)

    return wrap


def _upstream_source(cls: type, name: str) -> str:
    return inspect.getsource(getattr(cls, name))


def _asserts_nothing(cls: type, name: str) -> bool:
    tree = ast.parse(textwrap.dedent(_upstream_source(cls, name)))
    return not any(isinstance(node, ast.Assert) for node in ast.walk(tree))


class _CheckedUnitExclusions:
    """The unit tests that do not apply to our models, each replaced by a check of why."""

    @_excluded_because("a timing loop with no assertion; speed is measured in benchmarks/")
    def test_init_time(self) -> None:
        """Checked: upstream still asserts nothing, and the ten constructions it times work."""
        assert _asserts_nothing(ChatModelUnitTests, "test_init_time")
        models = [self.chat_model_class(**self.chat_model_params) for _ in range(10)]
        assert len({id(m) for m in models}) == 10

    @_excluded_because("not LangChain-serialisable: it holds callables or a client object")
    def test_serdes(self, model: BaseChatModel) -> None:
        """Checked: the class says so and ``dumpd`` gives LangChain's not-implemented stub."""
        assert not self.chat_model_class.is_lc_serializable()
        assert dumpd(model)["type"] == "not_implemented"

    @_excluded_because("reads no environment variable: it is configured in code")
    def test_init_from_env(self) -> None:
        """Checked: the variables ChatOpenAI reads change nothing in the model built."""
        env = {"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
        params = self.chat_model_params
        plain = self.chat_model_class(**params)
        with mock.patch.dict(os.environ, env):
            from_env = self.chat_model_class(**params)
        assert from_env.model_dump() == plain.model_dump()


class _NoNetworkClient:
    """A client for the unit tests, which build models and never call them."""

    def __init__(self) -> None:
        self.chat = self
        self.completions = self

    def create(self, **kwargs: Any) -> Any:  # pragma: no cover - unit tests make no calls
        raise AssertionError("the unit tests make no model calls")


class TestScriptedChatModelUnit(_CheckedUnitExclusions, ChatModelUnitTests):
    @property
    def chat_model_class(self) -> type[BaseChatModel]:
        return ScriptedChatModel

    @property
    def chat_model_params(self) -> dict:
        return {"respond": lambda messages: "ok"}


class TestOpenAIClientChatModelUnit(_CheckedUnitExclusions, ChatModelUnitTests):
    @property
    def chat_model_class(self) -> type[BaseChatModel]:
        return OpenAIClientChatModel

    @property
    def chat_model_params(self) -> dict:
        return {"client": _NoNetworkClient(), "model": "gpt-4o-mini"}


# -- integration, over the loopback stub ---------------------------------------------------------
def _answer(body: dict[str, Any]) -> StubReply:
    """What a cooperative model answers: the tool it is told to call (or the only one, for
    a question), else a short text; ``stop`` sequences end the text as a provider would."""
    messages = body["messages"]
    tools = body.get("tools") or []
    last = messages[-1]
    choice = body.get("tool_choice")
    if (
        tools
        and last["role"] in ("user",)
        and (choice not in (None, "none", "auto") or len(tools) == 1)
    ):
        tool = tools[0]["function"]
        if isinstance(choice, dict):
            name = choice["function"]["name"]
            tool = next(t["function"] for t in tools if t["function"]["name"] == name)
        quoted = re.search(r"'([^']+)'", str(last.get("content")))  # a name the user gave
        text = quoted.group(1) if quoted else "x"
        args = {
            key: (3 if spec.get("type") == "integer" else text)
            for key, spec in (tool.get("parameters") or {}).get("properties", {}).items()
        }
        return StubReply(tool_calls=[("call_std_1", tool["name"], json.dumps(args))])
    if (body.get("response_format") or {}).get("type") == "json_object":
        # JSON mode: an object with the keys the user named in quotes
        keys = re.findall(r"'([^']+)'", str(last.get("content")))
        return StubReply(content=json.dumps({key: f"a {key}" for key in keys}))
    text = "Hello! I am a scripted stand-in."
    for stop in body.get("stop") or []:
        text = text.split(stop)[0]
    return StubReply(content=text)


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub([], respond=_answer) as server:
        yield server


class TestOpenAIClientChatModelIntegration(ChatModelIntegrationTests):
    @pytest.fixture(autouse=True)
    def _serve(self, stub):
        self.__class__._base_url = stub.base_url

    @property
    def chat_model_class(self) -> type[BaseChatModel]:
        return OpenAIClientChatModel

    @property
    def chat_model_params(self) -> dict:
        client = openai.OpenAI(base_url=self._base_url, api_key="test", max_retries=0)
        return {"client": client, "model": "gpt-4o-mini"}

    @property
    def model_override_value(self) -> str:
        return "gpt-4o"

    # The adapter converts LangChain's standard image / PDF / audio blocks to OpenAI's shape
    # as ChatOpenAI does (test_client_model.py checks the body the server gets); these
    # flags let the standard tests send them, and the stub answers as it answers any text.
    # Anthropic-format content it sends as given, so it does not claim that.
    @property
    def supports_json_mode(self) -> bool:
        return True

    @property
    def supports_image_inputs(self) -> bool:
        return True

    @property
    def supports_image_tool_message(self) -> bool:
        return True

    @property
    def supports_pdf_inputs(self) -> bool:
        return True

    @property
    def supports_pdf_tool_message(self) -> bool:
        return True

    @property
    def supports_audio_inputs(self) -> bool:
        return True

    @property
    def supports_anthropic_inputs(self) -> bool:
        return False

    test_pdf_inputs = _downloads_its_fixture("test_pdf_inputs")
    test_audio_inputs = _downloads_its_fixture("test_audio_inputs")
    test_image_inputs = _downloads_its_fixture("test_image_inputs")
    test_image_tool_message = _downloads_its_fixture("test_image_tool_message")
    test_pdf_tool_message = _downloads_its_fixture("test_pdf_tool_message")

    @_excluded_because(
        "Anthropic-format content (tool_use, thinking, image source blocks) is sent as given: "
        "the adapter converts LangChain's standard blocks only"
    )
    def test_anthropic_inputs(self, model: BaseChatModel) -> None:
        """Checked: upstream skips without the flag, and an Anthropic block goes unconverted."""
        source = _upstream_source(ChatModelIntegrationTests, "test_anthropic_inputs")
        assert "if not self.supports_anthropic_inputs" in source
        assert not self.supports_anthropic_inputs
        block = {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "x"},
        }
        assert wire_messages([HumanMessage([block])])[0]["content"] == [block]

    @_excluded_because("times a stream replayed from VCR cassettes; none are recorded offline")
    def test_stream_time(self) -> None:
        """Checked: upstream still needs the cassettes, and still only times."""
        source = _upstream_source(ChatModelIntegrationTests, "test_stream_time")
        assert "if not self.enable_vcr_tests" in source and "vcr: Cassette" in source
        assert not self.enable_vcr_tests
        assert _asserts_nothing(ChatModelIntegrationTests, "test_stream_time")
