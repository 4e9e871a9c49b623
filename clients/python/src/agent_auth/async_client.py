"""The asyncio client: the same operations as ``Client``, as coroutines."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Dict, List, Mapping, Optional, cast

from . import _calls as calls
from ._async_transport import send
from ._transport import Settings, check_settings
from .errors import ValidationError, WaitTimeoutError
from .types import (
    FINAL_STATUSES,
    Action,
    ActionStatus,
    ActionType,
    ApiCallResult,
    HistoryPage,
    RiskLevel,
    SpendingSummary,
    VaultResponse,
    VaultService,
)


class AsyncClient:
    """The agent-side client for asyncio code: every method of ``Client``, awaited.

    Calls go over a small asyncio HTTP/1.1 client of its own (no thread per call), so many held waits can run at
    once and cancelling a task closes its connection at once. HTTP proxy settings are not used.

    Args:
        api_key: the agent's API key (``aa_…``).
        base_url: the service's address including ``/api/v1``, e.g. ``http://127.0.0.1:8080/api/v1``.
        max_retries: retries after a 429 (honouring ``Retry-After``) and of a transient failure (502, 503, 504, a
            connection error) of a call that may be repeated; default 3.
        max_retry_delay: longest single wait for a ``Retry-After``, in seconds; default 60.
        timeout: socket time-out of one call in seconds (a held read adds its hold); default 30.
    """

    def __init__(
        self,
        api_key: str,
        base_url: str,
        *,
        max_retries: int = 3,
        max_retry_delay: float = 60.0,
        timeout: float = 30.0,
    ) -> None:
        key, url = check_settings(api_key, base_url)
        self._settings = Settings(url, key, max_retries, max_retry_delay, timeout)
        # False once the service refused a held wait (an older service): this client polls from then on.
        self._holds_waits = True

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    async def _send(self, call: calls.Call) -> Any:
        return await send(self._settings, call)

    async def request_action(
        self,
        action_type: ActionType,
        title: str,
        *,
        description: Optional[str] = None,
        risk_level: Optional[RiskLevel] = None,
        reversible: Optional[bool] = None,
        amount: Optional[float] = None,
        currency: Optional[str] = None,
        recipient: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        expires_in_seconds: Optional[int] = None,
        callback_url: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Action:
        """Creates an action request and returns at once: ``pending``, or ``approved``/``denied`` when a rule, grant
        or spending limit decided.

        Every create carries an ``Idempotency-Key`` (a fresh UUID unless given), so a 502/503/504 or a connection
        error is retried with backoff and can never create the request twice. Fields left ``None`` take the
        service's defaults (risk ``medium``, reversible, ``USD``, expiry 300 s).
        """
        fields = {
            "action_type": action_type,
            "title": title,
            "description": description,
            "risk_level": risk_level,
            "reversible": reversible,
            "amount": amount,
            "currency": currency,
            "recipient": recipient,
            "metadata": dict(metadata) if metadata is not None else None,
            "expires_in_seconds": expires_in_seconds,
            "callback_url": callback_url,
        }
        return cast(Action, await self._send(calls.create_action(fields, idempotency_key)))

    async def get_status(self, request_id: str) -> Action:
        """Reads one request; a pending request past its expiry comes back expired."""
        return cast(Action, await self._send(calls.get_action(request_id)))

    async def cancel_action(self, request_id: str) -> Action:
        """Withdraws the agent's own pending request (status ``cancelled``, resolved by ``agent``): the holder no
        longer sees it. A request that already left pending raises ``ConflictError`` (409)."""
        return cast(Action, await self._send(calls.cancel_action(request_id)))

    async def wait_for_result(
        self,
        request_id: str,
        *,
        timeout: Optional[float] = None,
        hold_seconds: float = calls.DEFAULT_HOLD_SECONDS,
        poll_interval: float = calls.DEFAULT_POLL_INTERVAL,
    ) -> Action:
        """Waits until a request is approved, denied, expired or cancelled and returns it in that state.

        Uses held reads (``GET /actions/{id}?wait=S``, at most ``hold_seconds``, 1 to 60) that the service answers
        the moment the holder decides; against a service that refuses ``wait`` it polls every ``poll_interval``
        seconds instead. Raises ``WaitTimeoutError`` (with the last ``action``) once ``timeout`` seconds pass; without
        a time-out it waits until the request expires on its own (at most one hour).
        """
        plan = calls.WaitPlan(timeout, hold_seconds, poll_interval)
        action = await self.get_status(request_id)
        while True:
            if action["status"] in FINAL_STATUSES:
                return action
            if plan.left() <= 0:
                raise WaitTimeoutError(action, cast(float, timeout))
            hold = plan.hold_for(self._holds_waits)
            if hold:
                asked = plan.now()
                held = await self._held_read(request_id, hold)
                if held is not None:
                    action = held
                    if plan.answered_at_once(held, asked, hold):
                        await asyncio.sleep(plan.pause())
                    continue
            # Never sleep past the deadline, but read once more right at it.
            await asyncio.sleep(plan.pause())
            action = await self.get_status(request_id)

    async def _held_read(self, request_id: str, seconds: int) -> Optional[Action]:
        try:
            return cast(Action, await self._send(calls.get_action(request_id, wait=seconds)))
        except ValidationError as err:
            if not calls.refuses_wait(err):
                raise
            self._holds_waits = False
            return None

    async def request_and_wait(
        self,
        action_type: ActionType,
        title: str,
        *,
        description: Optional[str] = None,
        risk_level: Optional[RiskLevel] = None,
        reversible: Optional[bool] = None,
        amount: Optional[float] = None,
        currency: Optional[str] = None,
        recipient: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        expires_in_seconds: Optional[int] = None,
        callback_url: Optional[str] = None,
        timeout: Optional[float] = None,
        hold_seconds: float = calls.DEFAULT_HOLD_SECONDS,
        poll_interval: float = calls.DEFAULT_POLL_INTERVAL,
    ) -> Action:
        """Requests an action and waits for its outcome: the "ask before acting" call. Arguments as
        ``request_action`` and ``wait_for_result``."""
        created = await self.request_action(
            action_type,
            title,
            description=description,
            risk_level=risk_level,
            reversible=reversible,
            amount=amount,
            currency=currency,
            recipient=recipient,
            metadata=metadata,
            expires_in_seconds=expires_in_seconds,
            callback_url=callback_url,
        )
        if created["status"] in FINAL_STATUSES:
            return created
        return await self.wait_for_result(
            created["id"], timeout=timeout, hold_seconds=hold_seconds, poll_interval=poll_interval
        )

    async def get_spending_summary(self) -> SpendingSummary:
        """Spending against every spending limit that applies to this agent."""
        return cast(SpendingSummary, await self._send(calls.spending_summary()))

    async def get_history(
        self,
        limit: Optional[int] = None,
        *,
        status: Optional[ActionStatus] = None,
        action_type: Optional[ActionType] = None,
        cursor: Optional[str] = None,
    ) -> HistoryPage:
        """One page of this agent's requests, newest first (``limit`` 1 to 200, default 50). Pass the page's
        ``next_cursor`` as ``cursor`` for the next page; it is None on the last."""
        return cast(HistoryPage, await self._send(calls.list_actions(limit, status, action_type, cursor)))

    async def iter_history(
        self,
        *,
        status: Optional[ActionStatus] = None,
        action_type: Optional[ActionType] = None,
        page_size: int = 50,
    ) -> AsyncIterator[Action]:
        """Every request of this agent matching the filters, newest first, reading page after page as needed."""
        cursor: Optional[str] = None
        while True:
            page = await self.get_history(page_size, status=status, action_type=action_type, cursor=cursor)
            for action in page["actions"]:
                yield action
            cursor = page["next_cursor"]
            if cursor is None:
                return

    async def list_vault_services(self) -> List[VaultService]:
        """The credentials the holder keeps in the vault (names, auth types, allowed hosts; never the secrets)."""
        return cast(List[VaultService], (await self._send(calls.vault_services()))["services"])

    async def request_api_call(
        self,
        service_name: str,
        method: str,
        url: str,
        *,
        headers: Optional[Mapping[str, str]] = None,
        body: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        risk_level: Optional[RiskLevel] = None,
        expires_in_seconds: Optional[int] = None,
    ) -> Action:
        """Creates the vault execution request for an API call (action_type ``system``), without waiting. The title
        defaults to ``"<METHOD> <url> via <service_name>"``."""
        fields = calls.api_call_fields(
            service_name=service_name,
            method=method,
            url=url,
            headers=headers,
            body=body,
            title=title,
            description=description,
            risk_level=risk_level,
            expires_in_seconds=expires_in_seconds,
        )
        return cast(Action, await self._send(calls.create_action(fields)))

    async def execute_approved(self, request_id: str) -> VaultResponse:
        """Makes the approved call of a vault execution request, once; the service injects the credential. Never
        retried (the upstream may not be idempotent)."""
        return cast(VaultResponse, await self._send(calls.execute_approved(request_id)))

    async def execute_api_call(
        self,
        service_name: str,
        method: str,
        url: str,
        *,
        headers: Optional[Mapping[str, str]] = None,
        body: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        risk_level: Optional[RiskLevel] = None,
        expires_in_seconds: Optional[int] = None,
        timeout: Optional[float] = None,
        hold_seconds: float = calls.DEFAULT_HOLD_SECONDS,
        poll_interval: float = calls.DEFAULT_POLL_INTERVAL,
    ) -> ApiCallResult:
        """The whole vault flow: request the call, wait for the holder, then execute. ``response`` is None unless
        the request was approved."""
        created = await self.request_api_call(
            service_name,
            method,
            url,
            headers=headers,
            body=body,
            title=title,
            description=description,
            risk_level=risk_level,
            expires_in_seconds=expires_in_seconds,
        )
        action = created
        if created["status"] not in FINAL_STATUSES:
            action = await self.wait_for_result(
                created["id"], timeout=timeout, hold_seconds=hold_seconds, poll_interval=poll_interval
            )
        if action["status"] != "approved":
            return {"action": action, "response": None}
        return {"action": action, "response": await self.execute_approved(action["id"])}

    async def get_jwks(self) -> Dict[str, Any]:
        """The service's public receipt keys (``/.well-known/jwks.json`` at the host root), for ``verify_receipt``."""
        return cast(Dict[str, Any], await self._send(calls.jwks(self._settings.base_url)))
