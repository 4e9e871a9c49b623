"""AsyncClient against the real service: the core paths of Client as coroutines, many held reads at once, a wait
cancelled at once, retries, typed errors, and the async payment client."""

from __future__ import annotations

import asyncio
import time
import unittest
from typing import Any, Awaitable, Callable

import support
from agent_auth import (
    AsyncClient,
    AsyncPaymentClient,
    ConflictError,
    NotFoundError,
    RateLimitedError,
    ValidationError,
    WaitTimeoutError,
)


def run(test: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(test())


class AsyncClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.base_url, _, _ = support.service()
        account = support.new_account(cls.base_url)
        cls.api_key = account["api_key"]
        cls.device = support.Device(cls.base_url, account["device_id"])

    def client(self, **options: Any) -> AsyncClient:
        return AsyncClient(self.api_key, self.base_url, **options)

    def test_create_held_wait_approve_deny_and_cancel(self) -> None:
        async def scenario() -> None:
            client = self.client()
            created = await client.request_action("communication", "Async report", metadata={"n": 1})
            self.assertEqual((created["status"], created["metadata"]), ("pending", {"n": 1}))
            self.assertEqual((await client.get_status(created["id"]))["status"], "pending")
            self.device.decide_later(support.is_for(created["id"]), "approve", delay=0.5)
            started = time.monotonic()
            done = await client.wait_for_result(created["id"], timeout=30, poll_interval=30)
            self.assertLess(time.monotonic() - started, 10)  # a held read, not a 30 s poll
            self.assertEqual(done["status"], "approved")

            self.device.decide_later(support.titled("Async tweet"), "deny", reason="no tweets")
            denied = await client.request_and_wait("social", "Async tweet", timeout=20)
            self.assertEqual((denied["status"], denied["reason"]), ("denied", "no tweets"))

            pending = await client.request_action("legal", "Async NDA")
            self.assertEqual((await client.cancel_action(pending["id"]))["status"], "cancelled")
            with self.assertRaises(ConflictError):
                await client.cancel_action(done["id"])
            with self.assertRaises(NotFoundError):
                await client.get_status("act_doesnotexist")
            with self.assertRaises(ValidationError) as caught:
                await client.request_action("purchase", "x", amount=-1)
            self.assertEqual(caught.exception.code, "invalid_request")

        run(scenario)

    def test_many_held_waits_at_once_each_released_by_its_approval(self) -> None:
        async def scenario() -> None:
            client = self.client()
            created = [await client.request_action("system", f"Parallel {n}") for n in range(12)]
            waits = [asyncio.ensure_future(client.wait_for_result(a["id"], timeout=30, poll_interval=30)) for a in created]
            await asyncio.sleep(0.5)
            started = time.monotonic()
            for action in created:
                self.device.approve(action["id"])
            results = await asyncio.gather(*waits)
            self.assertEqual([r["status"] for r in results], ["approved"] * 12)
            self.assertLess(time.monotonic() - started, 10)

        run(scenario)

    def test_a_cancelled_wait_stops_at_once_and_a_timeout_raises(self) -> None:
        async def scenario() -> None:
            client = self.client()
            created = await client.request_action("scheduling", "Async table")
            task = asyncio.ensure_future(client.wait_for_result(created["id"]))
            await asyncio.sleep(0.5)
            started = time.monotonic()
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            self.assertLess(time.monotonic() - started, 2)  # not the 50 s the held read could last
            with self.assertRaises(WaitTimeoutError):
                await client.wait_for_result(created["id"], timeout=1.2, poll_interval=0.2)

        run(scenario)

    def test_history_cursor_spending_and_vault_services(self) -> None:
        account = support.new_account(self.base_url)
        client = AsyncClient(account["api_key"], self.base_url)

        async def scenario() -> None:
            ids = [(await client.request_action("system", f"h{n}"))["id"] for n in range(3)]
            page = await client.get_history(2)
            self.assertEqual([a["id"] for a in page["actions"]], [ids[2], ids[1]])
            rest = await client.get_history(2, cursor=page["next_cursor"])
            self.assertEqual(([a["id"] for a in rest["actions"]], rest["next_cursor"]), ([ids[0]], None))
            self.assertEqual([a["id"] async for a in client.iter_history(page_size=1)], list(reversed(ids)))
            self.assertEqual((await client.get_spending_summary())["summaries"], [])
            self.assertEqual(await client.list_vault_services(), [])
            jwks = await client.get_jwks()
            self.assertTrue(jwks["keys"])

        run(scenario)

    def test_retries_a_429_and_a_lost_create_through_a_proxy(self) -> None:
        proxy = support.Proxy(self.base_url)
        self.addCleanup(proxy.close)
        limited = (429, {"retry-after": "1"}, {"code": "rate_limited", "detail": "slow down"})

        async def scenario() -> None:
            client = AsyncClient(self.api_key, proxy.base_url)
            proxy.intervene(lambda m, p: m == "POST", limited)
            proxy.intervene(lambda m, p: m == "POST", "forward-then-drop")
            created = await client.request_action("system", "Async retried create")
            posts = [(h["idempotency-key"], at) for m, _, h, at in proxy.seen if m == "POST"]
            self.assertEqual(len(posts), 3)
            self.assertEqual(len({key for key, _ in posts}), 1)
            self.assertGreaterEqual(posts[1][1] - posts[0][1], 0.95)
            titles = [a["title"] for a in (await AsyncClient(self.api_key, self.base_url).get_history(200))["actions"]]
            self.assertEqual(titles.count("Async retried create"), 1)
            self.assertEqual((await client.get_status(created["id"]))["id"], created["id"])

            impatient = AsyncClient(self.api_key, proxy.base_url, max_retries=0)
            proxy.intervene(lambda m, p: m == "GET", limited)
            with self.assertRaises(RateLimitedError) as caught:
                await impatient.get_history(1)
            self.assertEqual((caught.exception.retry_after_seconds, caught.exception.code), (1, "rate_limited"))

        run(scenario)

    def test_async_payment_client(self) -> None:
        async def scenario() -> None:
            payments = AsyncPaymentClient(self.api_key, self.base_url)
            request = await payments.request_payment(12.5, "Acme Books")
            self.assertEqual((request["title"], request["reversible"]), ("Pay Acme Books 12.50 USD", False))
            self.device.decide_later(support.is_for(request["id"]), "approve", payment_method="wallet_pay")
            done = await payments.wait_for_result(request["id"], timeout=20)
            self.assertEqual(done["resolved_by"], "wallet_pay")
            self.assertEqual((await payments.get_status(request["id"]))["status"], "approved")

        run(scenario)


if __name__ == "__main__":
    unittest.main()
