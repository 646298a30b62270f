"""Webhook deliveries (issue 31, item 4): a queue per client, each with its own retries and
backoff, and callback URLs kept off the service's own network.

A notification of an expression registered with a ``callback`` is stored with a pending
*delivery* in the same transaction (:mod:`._db`), so deliveries survive a restart and are
made at least once. Before, one worker POSTed every client's deliveries one after another:
a receiver that never answered held each of them for the whole HTTP timeout, and bob's
deliveries waited 50 s behind alice's. Now a dispatcher starts one task per client with
deliveries due; a client's task delivers its own, oldest first, and ends when none is due.
Clients never wait for each other. Within a client, a URL that failed is backed off as a
whole: its other deliveries due in the same pass wait with it instead of each spending a
timeout on the same dead receiver.

Callback URLs (server-side request forgery): a service on a company's network must not POST
to its neighbours on a client's say. :func:`refusal` refuses at registration a URL whose
host is ``localhost`` (or a name under it, RFC 6761) or an address that is not global —
loopback, private, link-local (``169.254.169.254``, the cloud's metadata service), shared,
unspecified, reserved, multicast, IPv4 in IPv6 — also written in the old numeric forms
(``2130706433``, ``0x7f.1``). At each attempt the host's addresses are resolved and checked
again, so a public-looking name that resolves to a private address is refused too (a DNS
answer that changes between that check and httpx's connection is not caught: put an egress
proxy in front of the service for that). Redirects are not followed. The operator allows
such URLs with ``xmlevents serve --allow-private-webhooks`` (receivers on the same machine,
tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import json
import logging
import socket
import sqlite3
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

import httpx

from ._commit import Writes
from ._db import Journal

__all__ = ["Webhooks", "refusal", "MAX_ATTEMPTS", "MAX_BACKOFF", "TIMEOUT"]

#: Attempts of one delivery before it is given up, and the longest wait between two.
MAX_ATTEMPTS = 8
MAX_BACKOFF = 60.0
#: Seconds one attempt may take (connecting, sending, the receiver's answer).
TIMEOUT = 5.0
#: Deliveries a client's task reads at once.
BATCH = 50

T = TypeVar("T")
_log = logging.getLogger("xmlevents.service")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class Store(Protocol):
    """What the deliveries need of the service: its reader and writer threads."""

    async def read(self, job: Callable[[Journal], T]) -> T: ...

    async def write(self, job: Callable[[], T]) -> T: ...

    @property
    def writes(self) -> Writes: ...


def _address(host: str) -> Address | None:
    """The address ``host`` writes, in any form the system's resolver reads as one (dotted,
    ``[v6]``, and inet_aton's old forms: ``2130706433``, ``0x7f.1``, ``127.1``); None for a
    name."""
    text = host.strip("[]").split("%")[0]  # an IPv6 zone (fe80::1%eth0) says nothing here
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        return None


def _local(address: Address) -> str | None:
    """Why ``address`` is not one to POST to unasked (None: a global address)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    for kind, test in (("a loopback", address.is_loopback),
                       ("a link-local", address.is_link_local),
                       ("an unspecified", address.is_unspecified),
                       ("a multicast", address.is_multicast), ("a private", address.is_private),
                       ("a reserved", address.is_reserved)):
        if test:
            return f"{kind} address"
    return None if address.is_global else "not a global address"


def refusal(url: str, *, allow_private: bool) -> str | None:
    """Why the callback ``url`` is refused at registration (None: accepted): not an http(s)
    URL with a host, or, unless ``allow_private``, a host on this machine or its network
    (see the module)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        parsed = None
    if (parsed is None or parsed.scheme not in ("http", "https") or not parsed.host
            or any(c.isspace() for c in url)):
        return f"callback must be an http(s) URL, got {url!r}"
    if allow_private:
        return None
    host = parsed.host.rstrip(".").lower()
    why: str | None
    if host == "localhost" or host.endswith(".localhost"):
        why = "localhost"
    else:
        address = _address(host)
        why = None if address is None else _local(address)
    if why is None:
        return None
    return (f"callback {url!r} names {why}: webhooks go to public addresses only (the "
            f"operator allows others with xmlevents serve --allow-private-webhooks)")


class _Refused(Exception):
    """A delivery's host resolves to an address :func:`refusal` would refuse."""


class Webhooks:
    """The deliveries of one service: a dispatcher and a task per client with deliveries due
    (see the module). :meth:`wake` after a commit that added deliveries."""

    def __init__(self, store: Store, *, allow_private: bool = False,
                 timeout: float = TIMEOUT) -> None:
        self._store = store
        self.allow_private = allow_private
        self._timeout = timeout
        self._wake = asyncio.Event()
        #: The running task of each client's queue.
        self._queues: dict[str, asyncio.Task[None]] = {}
        self._task: asyncio.Task[None] | None = None
        self._http: httpx.AsyncClient | None = None

    def start(self) -> None:
        """Start the dispatcher (in the event loop that serves)."""
        self._http = httpx.AsyncClient(timeout=self._timeout, follow_redirects=False)
        self._task = asyncio.get_running_loop().create_task(self._dispatch())

    def wake(self) -> None:
        """New deliveries are committed: look for the queues to start (event loop only)."""
        self._wake.set()

    async def stop(self) -> None:
        """Stop the dispatcher and every queue (an attempt in flight is dropped, and made
        again after the next start: at least once)."""
        tasks = [t for t in (self._task, *self._queues.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._http is not None:
            await self._http.aclose()

    async def _dispatch(self) -> None:
        """Start a task for each client with deliveries due and none running; sleep until the
        next one is due or :meth:`wake`. A database busy for a moment is tried again a second
        later: the dispatcher never stops."""
        while True:
            self._wake.clear()  # before the read: a commit after it sets it again
            now = time.time()
            wait: float | None = None
            try:
                queues = await self._store.read(Journal.delivery_queues)
            except sqlite3.Error:
                queues, wait = [], 1.0
            for client, due in queues:
                if client in self._queues:
                    continue  # running: it reads its own next deliveries, and wakes us
                if due <= now:
                    self._queues[client] = asyncio.get_running_loop().create_task(
                        self._drain(client))
                else:
                    wait = due - now if wait is None else min(wait, due - now)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    async def _drain(self, client: str) -> None:
        """Deliver ``client``'s due deliveries until none is due."""
        try:
            while True:
                rows = await self._store.read(functools.partial(
                    Journal.due_deliveries, now=time.time(), limit=BATCH, client=client))
                if not rows:
                    return
                backoff: dict[str, float] = {}  # url -> when it is tried again
                for cursor, url, attempts, body in rows:
                    if url in backoff:  # the same dead receiver: wait with the one that failed
                        await self._store.write(functools.partial(
                            self._store.writes.retry, cursor, attempts, backoff[url]))
                        continue
                    again = await self._attempt(client, cursor, url, attempts, body)
                    if again is not None:
                        backoff[url] = again
        except sqlite3.Error as exc:  # busy: the dispatcher starts this queue again
            _log.warning("webhooks of %s: %s; tried again in a moment", client, exc)
        finally:
            self._queues.pop(client, None)
            self._wake.set()

    async def _attempt(self, client: str, cursor: int, url: str, attempts: int,
                       body: str) -> float | None:
        """POST one notification; record the outcome (delivered, given up, or due again).
        Returns when it is due again, or None."""
        assert self._http is not None
        note = {"cursor": cursor, **json.loads(body)}
        writes = self._store.writes
        try:
            await self._check_host(url)
            response = await self._http.post(url, json=note)
            ok = response.status_code < 300
        except (httpx.InvalidURL, _Refused) as exc:  # cannot succeed later: given up
            _log.warning("webhook of %s: notification %d not delivered to %s: %s", client,
                         cursor, url, exc)
            ok, attempts = False, MAX_ATTEMPTS
        except Exception:  # any other failure is the receiver's: retry, never stop here
            ok = False
        if ok or attempts + 1 >= MAX_ATTEMPTS:
            if not ok and attempts < MAX_ATTEMPTS:
                _log.warning("webhook of %s: notification %d given up after %d attempts "
                             "to %s", client, cursor, attempts + 1, url)
            await self._store.write(functools.partial(writes.delivered, cursor))
            return None
        due = time.time() + min(MAX_BACKOFF, 0.5 * 2.0 ** attempts)
        await self._store.write(functools.partial(writes.retry, cursor, attempts + 1, due))
        return due

    async def _check_host(self, url: str) -> None:
        """Refuse a host that resolves to an address :func:`refusal` refuses (a name
        registered as public that points inside); nothing to check when allowed."""
        if self.allow_private:
            return
        parsed = httpx.URL(url)
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        infos = await asyncio.get_running_loop().getaddrinfo(parsed.host, port,
                                                             type=socket.SOCK_STREAM)
        for *_, sockaddr in infos:
            why = _local(ipaddress.ip_address(str(sockaddr[0]).split("%")[0]))
            if why is not None:
                raise _Refused(f"{parsed.host} resolves to {sockaddr[0]}, {why}")
