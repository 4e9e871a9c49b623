"""``requires_approval``: a function (an agent's tool) that runs only once a person approved the call."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import json
from typing import Any, Callable, Dict, Mapping, Optional, TypeVar, Union, cast

from . import _calls as calls
from .async_client import AsyncClient
from .client import Client
from .errors import ApprovalDeniedError
from .types import FINAL_STATUSES, Action, ActionType, RiskLevel

F = TypeVar("F", bound=Callable[..., Any])
Arguments = Dict[str, Any]
#: A fixed title, a ``str.format`` template over the call's arguments (``"Email {to}"``), or a function of them.
Title = Union[str, Callable[[Arguments], str]]

_ELLIPSIS = "\u2026"


def _jsonable_fallback(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)  # a pydantic model
    if callable(dump):
        return dump()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


def jsonable(value: Any) -> Any:
    """The value as JSON can carry it: dataclasses and pydantic models as objects, anything else as its repr."""
    return json.loads(json.dumps(value, default=_jsonable_fallback))


def tool_call_title(tool_name: str, arguments: Mapping[str, Any]) -> str:
    """A readable one-line title for a call, ``name(key: value, …)``, cut to the service's 200 characters."""
    inner = ", ".join(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in arguments.items())
    title = f"{tool_name}({inner})"
    return title if len(title) <= calls.TITLE_MAX else title[: calls.TITLE_MAX - 1] + _ELLIPSIS


def call_arguments(signature: inspect.Signature, args: Any, kwargs: Any) -> Arguments:
    """The call's arguments by parameter name, defaults applied, without a method's ``self`` or ``cls``.

    Raises TypeError, as the call itself would, when they do not fit the signature: nobody is asked about a call
    that cannot run.
    """
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    names = list(signature.parameters)
    arguments = dict(bound.arguments)
    if names and names[0] in ("self", "cls"):
        arguments.pop(names[0], None)
    return jsonable(arguments)  # type: ignore[no-any-return]


@dataclasses.dataclass(frozen=True)
class _Request:
    """How the wrapped function's calls are described to the holder."""

    tool_name: str
    action_type: str
    title: Optional[Title]
    fields: Mapping[str, Any]
    metadata: Mapping[str, Any]
    describe: Optional[Callable[[Arguments], Mapping[str, Any]]]

    def fields_for(self, arguments: Arguments) -> Dict[str, Any]:
        """The action request's fields for one call: the call in the metadata, the options and ``describe`` over it."""
        extra = dict(self.describe(arguments)) if self.describe else {}
        metadata = {"framework": "python", "tool": self.tool_name, "arguments": arguments}
        metadata.update(self.metadata)
        metadata.update(extra.pop("metadata", None) or {})
        fields: Dict[str, Any] = {"action_type": self.action_type, "title": self._title(arguments)}
        fields.update(calls.present(self.fields))
        fields.update(extra)
        fields["metadata"] = metadata
        return fields

    def _title(self, arguments: Arguments) -> str:
        if self.title is None:
            return tool_call_title(self.tool_name, arguments)
        text = self.title(arguments) if callable(self.title) else self.title.format_map(arguments)
        return text if len(text) <= calls.TITLE_MAX else text[: calls.TITLE_MAX - 1] + _ELLIPSIS


def _approve_blocking(client: Client, request: _Request, arguments: Arguments, wait: Dict[str, Any]) -> Action:
    created = client.request_action(**request.fields_for(arguments))
    if created["status"] in FINAL_STATUSES:
        return created
    try:
        return client.wait_for_result(created["id"], **wait)
    except BaseException:
        _withdraw_blocking(client, created["id"])
        raise


def _withdraw_blocking(client: Client, request_id: str) -> None:
    # Nobody waits for the answer any more: take the question off the holder's phone. Best effort: it may have
    # been decided meanwhile (409), or the service may be unreachable.
    try:
        client.cancel_action(request_id)
    except Exception:
        pass


async def _approve_async(client: AsyncClient, request: _Request, arguments: Arguments, wait: Dict[str, Any]) -> Action:
    created = await client.request_action(**request.fields_for(arguments))
    if created["status"] in FINAL_STATUSES:
        return created
    try:
        return await client.wait_for_result(created["id"], **wait)
    except BaseException:  # a time-out, an error, or the task was cancelled
        try:
            await client.cancel_action(created["id"])
        except Exception:
            pass
        raise


def _settled(action: Action) -> Action:
    if action["status"] != "approved":
        raise ApprovalDeniedError(action)
    return action


def requires_approval(
    client: Union[Client, AsyncClient],
    *,
    action_type: ActionType = "system",
    title: Optional[Title] = None,
    description: Optional[str] = None,
    risk_level: Optional[RiskLevel] = None,
    amount: Optional[float] = None,
    currency: Optional[str] = None,
    recipient: Optional[str] = None,
    reversible: Optional[bool] = None,
    expires_in_seconds: Optional[int] = None,
    metadata: Optional[Mapping[str, Any]] = None,
    describe: Optional[Callable[[Arguments], Mapping[str, Any]]] = None,
    timeout: Optional[float] = None,
    hold_seconds: float = calls.DEFAULT_HOLD_SECONDS,
    poll_interval: float = calls.DEFAULT_POLL_INTERVAL,
) -> Callable[[F], F]:
    """Wraps a function so that each call first asks a person, and runs only once they approved.

    Each call becomes one action request whose metadata carries ``{"framework": "python", "tool": <name>,
    "arguments": {<parameter>: <value>, …}}``, then waits for the answer (held reads, as ``wait_for_result``). An
    approved call runs with its arguments and returns what the function returns; a denied, expired or withdrawn
    one raises ``ApprovalDeniedError`` (with the holder's ``reason``) without running. When the wait itself ends
    without an answer (``timeout`` passes, an error, the task is cancelled) the request is withdrawn and the
    exception passes on. A rule, grant or spending limit may decide at creation: then there is no wait.

    Works on plain and ``async`` functions; an ``async`` function may use either client, a plain one needs
    ``Client``. The wrapper keeps the function's name, docstring and signature, so agent frameworks that read
    them (LangChain's ``@tool``, the OpenAI Agents SDK's ``@function_tool``) see the original.

    Args:
        client: the ``Client`` or ``AsyncClient`` that asks.
        action_type: the requests' type, ``system`` by default.
        title: what the holder reads: a fixed text, a ``str.format`` template over the arguments
            (``"Email {to}: {subject}"``) or a function of the arguments dict; by default the call itself,
            ``send_email(to: "ann@example.com", …)``.
        description, risk_level, amount, currency, recipient, reversible, expires_in_seconds: the request's
            fields, as ``Client.request_action``.
        metadata: extra metadata merged over the call's (the service takes at most 20 keys and 8 KB of JSON).
        describe: a function of the arguments dict returning more fields per call (e.g. ``{"amount": …}``).
        timeout, hold_seconds, poll_interval: as ``Client.wait_for_result``.
    """
    wait = {"timeout": timeout, "hold_seconds": hold_seconds, "poll_interval": poll_interval}
    fields = {
        "description": description,
        "risk_level": risk_level,
        "amount": amount,
        "currency": currency,
        "recipient": recipient,
        "reversible": reversible,
        "expires_in_seconds": expires_in_seconds,
    }

    def decorate(fn: F) -> F:
        request = _Request(fn.__name__, action_type, title, fields, dict(metadata or {}), describe)
        signature = inspect.signature(fn)
        if inspect.iscoroutinefunction(fn):

            async_client = client if isinstance(client, AsyncClient) else None
            blocking_client = cast(Client, client)

            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                arguments = call_arguments(signature, args, kwargs)
                if async_client is not None:
                    _settled(await _approve_async(async_client, request, arguments, wait))
                else:
                    # A blocking client waits in a worker thread, so the event loop keeps running meanwhile.
                    _settled(await asyncio.to_thread(_approve_blocking, blocking_client, request, arguments, wait))
                return await fn(*args, **kwargs)

            return run_async  # type: ignore[return-value]

        if not isinstance(client, Client):
            raise TypeError(f"{fn.__name__} is not async: requires_approval needs a Client (not an AsyncClient) for it")
        blocking = client

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            _settled(_approve_blocking(blocking, request, call_arguments(signature, args, kwargs), wait))
            return fn(*args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate
