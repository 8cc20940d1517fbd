"""Filling context from text: the seed's first two sources of fields (the third is a tool
returning ``Result(context_variables=...)``).

Swarm never extracts anything: *you* decide which fields go into ``context_variables``.
:func:`extract_context` does it either with rules you write (a regex or a function per field,
run over what the user said) or with one structured-extraction call to a chat model
(``model.with_structured_output(schema)``), or both: rules first, the model only for the fields
the rules did not find, and a rule's value wins.

Example:
    >>> from pydantic import BaseModel
    >>> class Customer(BaseModel):
    ...     name: str | None = None
    ...     order_id: int | None = None
    >>> extract_context("I'm Xiaoming, order 7 please refund", Customer,
    ...                 rules={"name": r"I'm (\\w+)", "order_id": r"order #?(\\d+)"})
    {'name': 'Xiaoming', 'order_id': 7}
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableBinding, RunnableSequence
from langchain_core.utils.function_calling import convert_to_json_schema
from pydantic import BaseModel, TypeAdapter, ValidationError

Rule = str | re.Pattern | Callable[[str], Any]


class Structured:
    """``model.with_structured_output(schema)``, made once and kept: pass it as
    :func:`extract_context`'s ``model`` to call it as is.

    Example:
        >>> from pydantic import BaseModel
        >>> from swarmgraph.graph import ScriptedChatModel, scripted_tool_call
        >>> class Pet(BaseModel):
        ...     name: str | None = None
        >>> llm = ScriptedChatModel([scripted_tool_call("Pet", {"name": "Rex"})] * 2)
        >>> ask = Structured(llm, Pet)
        >>> [extract_context("my dog is Rex", Pet, model=ask) for _ in range(2)]
        [{'name': 'Rex'}, {'name': 'Rex'}]
    """

    def __init__(self, model: Any, schema: type[BaseModel]) -> None:
        self.model, self.schema = model, schema
        self.runnable = schema_described_once(model.with_structured_output(schema))

    def invoke(self, messages: list[BaseMessage]) -> Any:
        return self.runnable.invoke(messages)


def schema_described_once(runnable: Any) -> Any:
    """``runnable`` (what ``with_structured_output`` made) with the schema LangChain keeps for
    its tracing metadata (``ls_structured_output_format``) turned into JSON schema now, once.
    A chat model's ``generate`` converts it on every call, tracer or not, from the pydantic
    class: the bulk of a scripted extraction call (a few ms for a 20-field schema). Given the
    JSON schema instead, it converts it to the same dict in microseconds. A runnable of another
    shape is returned as it is.

    Example:
        >>> from pydantic import BaseModel
        >>> from swarmgraph.graph import ScriptedChatModel
        >>> class Pet(BaseModel):
        ...     name: str | None = None
        >>> made = schema_described_once(ScriptedChatModel([]).with_structured_output(Pet))
        >>> made.first.kwargs["ls_structured_output_format"]["schema"]["title"]
        'Pet'
    """
    first = runnable.first if isinstance(runnable, RunnableSequence) else runnable
    if not isinstance(first, RunnableBinding):
        return runnable
    told = first.kwargs.get("ls_structured_output_format")
    if not isinstance(told, dict) or not isinstance(told.get("schema"), type):
        return runnable
    try:
        schema = convert_to_json_schema(told["schema"])
    except ValueError:  # LangChain would drop the metadata on every call: leave that to it
        return runnable
    kwargs = {**first.kwargs, "ls_structured_output_format": {**told, "schema": schema}}
    bound = first.model_copy(update={"kwargs": kwargs})
    return runnable.model_copy(update={"first": bound}) if first is not runnable else bound


EXTRACT_PROMPT = (
    "Extract the requested fields from what the user said. Use only facts the user stated; "
    "leave a field empty when the user did not give it."
)


def user_texts(messages: str | BaseMessage | Sequence[Any]) -> list[str]:
    """What the user said, oldest first: human messages or ``{"role": "user"}`` dicts.

    Example:
        >>> user_texts([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
        ['hi']
    """
    if isinstance(messages, str):
        return [messages]
    if isinstance(messages, (BaseMessage, Mapping)):
        messages = [messages]
    texts = []
    for m in messages:
        if isinstance(m, HumanMessage):
            content = m.content
        elif isinstance(m, Mapping) and m.get("role") == "user":
            content = m.get("content") or ""
        else:
            continue
        if not isinstance(content, str):  # content blocks: keep the text parts
            content = " ".join(
                b.get("text", "") if isinstance(b, dict) else str(b) for b in content
            )
        texts.append(content)
    return texts


def _apply_rule(rule: Rule, text: str) -> Any:
    if callable(rule) and not isinstance(rule, (str, re.Pattern)):
        return rule(text)
    match = re.search(rule, text)
    if match is None:
        return None
    if "value" in match.re.groupindex:
        return match.group("value")
    return match.group(1) if match.re.groups else match.group(0)


def _schema_fields(schema: type[BaseModel]) -> dict[str, Any]:
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        raise TypeError(f"schema must be a pydantic model class, got {schema!r}")
    return schema.model_fields


def extract_context(
    messages: str | BaseMessage | Sequence[Any],
    schema: type[BaseModel],
    model: Any = None,
    rules: Mapping[str, Rule] | None = None,
) -> dict[str, Any]:
    """Fields of ``schema`` found in what the user said, as a dict ready for context.

    ``rules``: field -> regex (group ``value``, else group 1, else the whole match) or
    ``function(text) -> value | None``; the newest user message that matches wins (users
    correct themselves). Values are converted to the field's type ("7" -> 7); a value that
    does not fit is a ``ValueError`` naming the field. ``model``: a chat model that supports
    ``with_structured_output``; called once, only if some field is still missing. Fields
    found by neither are left out (never ``None``).

    Example:
        >>> from pydantic import BaseModel
        >>> from swarmgraph.graph import ScriptedChatModel, scripted_tool_call
        >>> class Customer(BaseModel):
        ...     name: str | None = None
        ...     order_id: int | None = None
        >>> llm = ScriptedChatModel([scripted_tool_call("Customer", {"name": "Xiaoming"})])
        >>> extract_context("this is Xiaoming, order 7", Customer, model=llm,
        ...                 rules={"order_id": r"order (\\d+)"})
        {'order_id': 7, 'name': 'Xiaoming'}
    """
    fields = _schema_fields(schema)
    texts = user_texts(messages)
    found: dict[str, Any] = {}
    for field, rule in (rules or {}).items():
        if field not in fields:
            raise ValueError(f"rule for {field!r}, which {schema.__name__} has no field named")
        for text in reversed(texts):
            value = _apply_rule(rule, text)
            if value is not None:
                try:
                    found[field] = TypeAdapter(fields[field].annotation).validate_python(value)
                except ValidationError as error:
                    raise ValueError(
                        f"rule for {field!r} matched {value!r}, which is not a valid "
                        f"{fields[field].annotation}: {error.errors()[0]['msg']}"
                    ) from None
                break
    missing = [name for name in fields if name not in found]
    if model is not None and missing and texts:
        # A runnable given as ``model`` is taken as the structured call itself (what
        # FactExtractor keeps: LangChain converts the schema to a tool on every
        # ``with_structured_output``, ~10 ms a call here).
        extractor = model if isinstance(model, Structured) else model.with_structured_output(schema)
        said = "\n".join(f"User: {t}" for t in texts)
        result = extractor.invoke([SystemMessage(EXTRACT_PROMPT), HumanMessage(said)])
        if isinstance(result, BaseModel):
            result = result.model_dump()
        for name in missing:
            value = (result or {}).get(name)
            if value is not None:
                found[name] = value
    return found
