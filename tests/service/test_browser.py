"""A web page subscribes to notifications (issue 31, item 9): headless Chromium loads a page
from another origin, which registers an expression with ``fetch`` and its bearer token (a
CORS preflight), asks for a stream ticket, opens ``EventSource`` on the stream with it,
signals three events once the stream is open, and posts what it received back to the page's
own server. The same page runs Swagger UI as ``/docs`` does, from the service's assets over
its ``/openapi.json``, and reports the operations it lists (one browser start for both:
about 2.5 s). Needs Debian's ``chromium`` (``apt-get install -y chromium``); skipped where no
Chromium is found."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from .http_server import thread_server

CHROMIUM = next((found for name in ("chromium", "chromium-browser", "google-chrome")
                 if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here: apt-get install "
                                "-y chromium (Debian) to run the browser test")

PAGE = """<!doctype html><html><head>
<link rel="stylesheet" href="%(base)s/docs/assets/swagger-ui.css"></head>
<body><pre id="out">waiting</pre><div id="ui"></div>
<script src="%(base)s/docs/assets/swagger-ui-bundle.js"></script><script>
const api = %(api)s;
const headers = {"Authorization": "Bearer s3cret-a", "Content-Type": "application/json"};
const out = document.getElementById("out");
const result = {};
async function report(part) {
  Object.assign(result, part);
  if (!("error" in result) && !("got" in result && "operations" in result)) return;
  out.textContent = JSON.stringify(result);  // what it received, in the DOM
  await fetch("/result", {method: "POST", body: JSON.stringify(result)});
}
(async () => {
  try {
    const reg = await (await fetch(api + "/expressions", {method: "POST", headers,
      body: JSON.stringify({expression: "newCD(title=T)"})})).json();
    const {ticket} = await (await fetch(api + "/notifications/stream/ticket",
      {method: "POST", headers})).json();
    const source = new EventSource(api + "/notifications/stream?ticket=" +
                                   encodeURIComponent(ticket));
    const got = [];
    source.addEventListener("notification", (e) => {
      got.push({id: e.lastEventId, data: JSON.parse(e.data)});
      if (got.length === 3) { source.close(); report({id: reg.id, got}); }
    });
    source.onopen = () => fetch(api + "/events", {method: "POST", headers,
      body: JSON.stringify(["Boy", "War", "Pop"].map(t => ({type: "newCD", params: {title: t}})))});
    source.onerror = () => report({error: "EventSource failed", state: source.readyState});
  } catch (e) { report({error: String(e)}); }
})();
// Swagger UI as /docs serves it (its assets from the service), here over CORS from this origin
SwaggerUIBundle({url: api + "/openapi.json", dom_id: "#ui"});
const poll = setInterval(() => {
  const ops = [...document.querySelectorAll(".opblock-summary")].map(op => [
    op.querySelector(".opblock-summary-method").textContent,
    op.querySelector(".opblock-summary-path").dataset.path]);
  if (ops.length) { clearInterval(poll); report({operations: ops}); }
}, 100);
</script></body></html>
"""


@pytest.fixture()
def page_server() -> Iterator[tuple[str, dict[str, Any], threading.Event]]:
    """The page's own origin: serves the page (set by the test) and takes its report."""
    state: dict[str, Any] = {}
    reported = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = state["page"].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            state["result"] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(204)
            self.end_headers()
            reported.set()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state, reported
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_subscribes_with_event_source(
        tmp_path: Path, page_server: tuple[str, dict[str, Any], threading.Event]) -> None:
    origin, state, reported = page_server
    with thread_server(str(tmp_path / "s.db"), {"s3cret-a": "alice"},
                       cors_origins=[origin]) as api:
        state["page"] = PAGE % {"api": json.dumps(api), "base": api}
        assert CHROMIUM is not None
        browser = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}",
             f"{origin}/"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        try:
            assert reported.wait(60), "the page reported nothing within 60 s"
        finally:
            os.killpg(browser.pid, signal.SIGKILL)
            browser.wait()
        doc = json.loads(urllib.request.urlopen(f"{api}/openapi.json").read())
    result = state["result"]
    assert "error" not in result, result
    got = result["got"]
    assert [n["data"]["bindings"]["T"] for n in got] == ["Boy", "War", "Pop"]
    assert all(n["data"]["expression"] == result["id"] for n in got)
    assert [int(n["id"]) for n in got] == [n["data"]["cursor"] for n in got]
    # Swagger UI, from the service's assets, lists every operation of /openapi.json
    listed = [[m.upper(), p] for p, item in doc["paths"].items() for m in item
              if m != "parameters"]
    assert sorted(result["operations"]) == sorted(listed)
