"""A narrow client for agents that only ever ask to pay: request a payment, wait for the answer."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from . import _calls as calls
from .async_client import AsyncClient
from .client import Client
from .types import Action


class PaymentClient:
    """Asks the holder to approve purchases. Arguments as ``Client``.

    A payment is an action request of type ``purchase`` titled ``"Pay <merchant> <amount> <currency>"``, with the
    merchant as recipient, marked not reversible (money leaves the account).
    """

    def __init__(
        self, api_key: str, base_url: str, *, max_retries: int = 3, max_retry_delay: float = 60.0, timeout: float = 30.0
    ) -> None:
        self.client = Client(
            api_key, base_url, max_retries=max_retries, max_retry_delay=max_retry_delay, timeout=timeout
        )

    def request_payment(
        self,
        amount: float,
        merchant: str,
        *,
        description: Optional[str] = None,
        currency: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        expires_in_seconds: Optional[int] = None,
        callback_url: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Action:
        """Asks the holder to approve paying ``amount`` (major units, e.g. 12.50) to ``merchant``; returns at once
        with the pending (or rule-decided) request. ``currency`` is an ISO 4217 code, USD by default."""
        fields = calls.payment_fields(
            amount=amount,
            merchant=merchant,
            description=description,
            currency=currency,
            metadata=metadata,
            expires_in_seconds=expires_in_seconds,
            callback_url=callback_url,
        )
        return self.client.request_action(**fields, idempotency_key=idempotency_key)

    def wait_for_result(
        self,
        request_id: str,
        *,
        timeout: Optional[float] = None,
        hold_seconds: float = calls.DEFAULT_HOLD_SECONDS,
        poll_interval: float = calls.DEFAULT_POLL_INTERVAL,
    ) -> Action:
        """Waits until the payment request is approved, denied, expired or cancelled (see ``Client.wait_for_result``)."""
        return self.client.wait_for_result(
            request_id, timeout=timeout, hold_seconds=hold_seconds, poll_interval=poll_interval
        )

    def get_status(self, request_id: str) -> Action:
        """Reads the payment request's current state."""
        return self.client.get_status(request_id)


class AsyncPaymentClient:
    """``PaymentClient`` for asyncio code. Arguments as ``AsyncClient``."""

    def __init__(
        self, api_key: str, base_url: str, *, max_retries: int = 3, max_retry_delay: float = 60.0, timeout: float = 30.0
    ) -> None:
        self.client = AsyncClient(
            api_key, base_url, max_retries=max_retries, max_retry_delay=max_retry_delay, timeout=timeout
        )

    async def request_payment(
        self,
        amount: float,
        merchant: str,
        *,
        description: Optional[str] = None,
        currency: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        expires_in_seconds: Optional[int] = None,
        callback_url: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Action:
        """See ``PaymentClient.request_payment``."""
        fields = calls.payment_fields(
            amount=amount,
            merchant=merchant,
            description=description,
            currency=currency,
            metadata=metadata,
            expires_in_seconds=expires_in_seconds,
            callback_url=callback_url,
        )
        return await self.client.request_action(**fields, idempotency_key=idempotency_key)

    async def wait_for_result(
        self,
        request_id: str,
        *,
        timeout: Optional[float] = None,
        hold_seconds: float = calls.DEFAULT_HOLD_SECONDS,
        poll_interval: float = calls.DEFAULT_POLL_INTERVAL,
    ) -> Action:
        """See ``PaymentClient.wait_for_result``."""
        return await self.client.wait_for_result(
            request_id, timeout=timeout, hold_seconds=hold_seconds, poll_interval=poll_interval
        )

    async def get_status(self, request_id: str) -> Action:
        """Reads the payment request's current state."""
        return await self.client.get_status(request_id)
