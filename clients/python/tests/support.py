"""What the tests share: the running service they talk to, a device that approves and denies through the real API,
and loopback HTTP servers (an upstream for vault calls, a forwarding proxy that can answer in the service's place).

The service is a real one: AGENT_AUTH_BASE_URL (ending in /api/v1), with AGENT_AUTH_API_KEY and AGENT_AUTH_DEVICE_ID
of a fresh account on it (test/e2e/python-client.e2e.test.ts starts one and sets them).
"""

from __future__ import annotations

import http.client
import json
import os
import sys
import threading
import time
import unittest
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple
from urllib.parse import urlsplit

# The tests exercise this checkout's source, not an installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

Reply = Tuple[int, Mapping[str, str], Any]


def service() -> Tuple[str, str, str]:
    """(base URL, API key, device id) of the service under test; skips the test when they are not given."""
    names = ("AGENT_AUTH_BASE_URL", "AGENT_AUTH_API_KEY", "AGENT_AUTH_DEVICE_ID")
    missing = [name for name in names if not os.environ.get(name)]
    if missing:
        raise unittest.SkipTest(f"no service to test against: set {', '.join(missing)} (npm test does)")
    return os.environ["AGENT_AUTH_BASE_URL"].rstrip("/"), os.environ["AGENT_AUTH_API_KEY"], os.environ["AGENT_AUTH_DEVICE_ID"]


def call(base_url: str, method: str, path: str, body: Any = None, headers: Optional[Mapping[str, str]] = None) -> Reply:
    """One raw HTTP call (no retries): status, headers, parsed body."""
    data = None if body is None else json.dumps(body).encode()
    all_headers = {"content-type": "application/json"} if data is not None else {}
    all_headers.update(headers or {})
    request = urllib.request.Request(base_url + path, data=data, headers=all_headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw, status, reply_headers = response.read(), response.status, response.headers
    except urllib.error.HTTPError as err:
        raw, status, reply_headers = err.read(), err.code, err.headers
    text = raw.decode()
    try:
        parsed: Any = json.loads(text) if text else None
    except ValueError:
        parsed = text
    return status, {k.lower(): v for k, v in reply_headers.items()}, parsed


class Device:
    """The holder's phone, through the device API: lists pending requests, approves, denies."""

    def __init__(self, base_url: str, device_id: str) -> None:
        self.base_url = base_url
        self.device_id = device_id

    def call(self, method: str, path: str, body: Any = None) -> Reply:
        return call(self.base_url, method, path, body, {"x-device-id": self.device_id})

    def ok(self, method: str, path: str, body: Any = None) -> Any:
        status, _, reply = self.call(method, path, body)
        if status != 200:
            raise AssertionError(f"{method} {path} answered {status}: {reply}")
        return reply

    def pending(self) -> List[Dict[str, Any]]:
        return self.ok("GET", "/pending")["requests"]  # type: ignore[no-any-return]

    def approve(self, request_id: str, **body: Any) -> Dict[str, Any]:
        return self.ok("POST", f"/actions/{request_id}/approve", body)  # type: ignore[no-any-return]

    def deny(self, request_id: str, reason: Optional[str] = None) -> Dict[str, Any]:
        return self.ok("POST", f"/actions/{request_id}/deny", {"reason": reason} if reason else {})  # type: ignore[no-any-return]

    def decide_later(
        self, match: Callable[[Dict[str, Any]], bool], decision: str = "approve", delay: float = 0.3, **body: Any
    ) -> "Later":
        """In the background: waits until a pending request matches, then (after `delay`) approves or denies it.
        A vault request is approved with the content hash the device is shown, as a phone would."""

        def run() -> Dict[str, Any]:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                found = [item for item in self.pending() if match(item)]
                if found:
                    time.sleep(delay)
                    item = found[0]
                    if decision == "deny":
                        return self.deny(item["id"], body.get("reason"))
                    if item.get("content_hash"):
                        body.setdefault("content_hash", item["content_hash"])
                    return self.approve(item["id"], **body)
                time.sleep(0.05)
            raise AssertionError("no matching request showed up in /pending")

        return Later(run)


class Later:
    """A function running in a thread, whose result (or exception) `result()` hands over."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._result: Any = None
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[], Any]) -> None:
        try:
            self._result = fn()
        except BaseException as err:  # handed to the test thread by result()
            self._error = err

    def result(self, timeout: float = 30) -> Any:
        self._thread.join(timeout)
        if self._error is not None:
            raise self._error
        return self._result


def new_account(base_url: str, unlimited: bool = True) -> Dict[str, str]:
    """A fresh account (its agent's API key, its device id); on the unlimited plan unless asked otherwise, so a test
    stack's small free-plan quota only meets the test about it."""
    status, _, account = call(base_url, "POST", "/accounts", {})
    if status != 200:
        raise AssertionError(f"POST /accounts answered {status}: {account}")
    if unlimited:
        Device(base_url, account["device_id"]).ok("POST", "/account/plan", {"plan": "unlimited"})
    return account  # type: ignore[no-any-return]


def is_for(request_id: str) -> Callable[[Dict[str, Any]], bool]:
    return lambda item: item["id"] == request_id


def titled(title: str) -> Callable[[Dict[str, Any]], bool]:
    return lambda item: item["title"] == title


class _Server:
    """A ThreadingHTTPServer on a free loopback port, closed by close()."""

    def __init__(self, handler: type) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Upstream(_Server):
    """An API behind the vault: records each request, answers 201 with what it received (its Authorization header
    included, which the service must redact)."""

    def __init__(self) -> None:
        seen: List[Dict[str, Any]] = []
        self.seen = seen

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                headers = {k.lower(): v for k, v in self.headers.items()}
                seen.append({"method": self.command, "path": self.path, "headers": headers, "body": body})
                reply = json.dumps({"got": self.headers.get("authorization"), "body": body}).encode()
                self.send_response(201)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            do_GET = do_POST = do_PUT = do_DELETE = _answer

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(Handler)


class Proxy(_Server):
    """Forwards every request to the real service, except those an intervention takes first.

    `intervene(match, answer)`: the next request for which match(method, path) is true is not forwarded as is:
    `answer` is either (status, headers, body) to answer in the service's place, "drop" to close the connection
    without an answer, or "forward-then-drop" to forward it (the service acts on it) and then close the connection
    without passing the answer on, as a network failure after the request arrived would. Each request is recorded
    in `seen` as (method, path, headers with lower-case names, time), each answer passed back in `answers`.
    """

    def __init__(self, target_base_url: str) -> None:
        target = urlsplit(target_base_url)
        self.base_url = ""
        self.seen: List[Tuple[str, str, Dict[str, str], float]] = []
        #: Each answer passed back: (status, its Retry-After or None, time).
        self.answers: List[Tuple[int, Optional[str], float]] = []
        self._interventions: List[Tuple[Callable[[str, str], bool], Any]] = []
        lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else None
                with lock:
                    proxy.seen.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, time.monotonic()))
                    answer = proxy._take(self.command, self.path)
                if answer == "drop":
                    self.close_connection = True
                    return
                if answer is None or answer == "forward-then-drop":
                    status, headers, raw = self._forward(body)
                    if answer == "forward-then-drop":
                        self.close_connection = True
                        return
                else:
                    status, headers, payload = answer
                    raw = json.dumps(payload).encode()
                    headers = {"content-type": "application/json", **headers}
                with lock:
                    retry_after = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
                    proxy.answers.append((status, retry_after, time.monotonic()))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _forward(self, body: Optional[bytes]) -> Tuple[int, Dict[str, str], bytes]:
                connection = http.client.HTTPConnection(target.hostname, target.port, timeout=90)
                skip = {"host", "connection", "content-length", "transfer-encoding"}
                headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
                connection.request(self.command, self.path, body=body, headers=headers)
                response = connection.getresponse()
                raw = response.read()
                kept = {k: v for k, v in response.getheaders() if k.lower() not in skip}
                connection.close()
                return response.status, kept, raw

            do_GET = do_POST = do_PUT = do_DELETE = _handle

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(Handler)
        # The same path prefix as the service (/api/v1), on the proxy's port.
        self.base_url = f"{self.origin}{target.path}"

    def _take(self, method: str, path: str) -> Any:
        for index, (match, answer) in enumerate(self._interventions):
            if match(method, path):
                del self._interventions[index]
                return answer
        return None

    def intervene(self, match: Callable[[str, str], bool], answer: Any) -> None:
        self._interventions.append((match, answer))

    def paths(self) -> List[str]:
        return [f"{method} {path}" for method, path, _, _ in self.seen]
