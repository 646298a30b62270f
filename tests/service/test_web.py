"""The service for web pages and the small items of issue 31 (item 9, finding 10), against a
real server: ``/openapi.json`` validates and names every route and method served, ``/docs``
and its assets are served, CORS answers preflights for the configured origins only, stream
tickets open one stream of their own client; 405 carries ``Allow``, ``limit=0`` and ``"time":
null`` are refused, ``/graph`` counts only the client's own nodes."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from openapi_spec_validator import validate
from starlette.routing import Mount, Route

from xmlevents.service import create_app
from xmlevents.service._openapi import openapi

from .http_server import TOKENS, A, B, thread_server

PAGE = "http://page.example:8000"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = str(tmp_path_factory.mktemp("web") / "s.db")
    with thread_server(db, TOKENS, cors_origins=[PAGE]) as base:
        yield base


def test_the_openapi_document_validates_and_names_every_route(url: str) -> None:
    doc = httpx.get(f"{url}/openapi.json").json()
    validate(doc)
    validate(openapi(secured=False))
    served = {(r.path, m.lower()) for r in create_app(":memory:").routes
              if isinstance(r, Route) for m in (r.methods or ()) if m != "HEAD"}
    described = {(p, m) for p, item in doc["paths"].items() for m in item if m != "parameters"}
    assert served == described
    assert any(isinstance(r, Mount) and r.path == "/docs/assets"
               for r in create_app(":memory:").routes)
    for path, item in doc["paths"].items():  # every problem answered is described
        for method, op in item.items():
            if method != "parameters" and path not in ("/health", "/openapi.json", "/docs"):
                assert "401" in op["responses"], (path, method)


def test_the_docs_page_and_its_assets_are_served(url: str) -> None:
    page = httpx.get(f"{url}/docs")
    assert page.status_code == 200 and "SwaggerUIBundle" in page.text
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        assert httpx.get(f"{url}/docs/assets/{asset}").status_code == 200


def test_cors_preflight_for_the_configured_origin_only(url: str) -> None:
    ask = {"Access-Control-Request-Method": "POST",
           "Access-Control-Request-Headers": "authorization, content-type"}
    r = httpx.options(f"{url}/notifications/stream/ticket", headers={"Origin": PAGE, **ask})
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == PAGE
    assert "authorization" in r.headers["access-control-allow-headers"].lower()
    r = httpx.options(f"{url}/events", headers={"Origin": "http://evil.example", **ask})
    assert r.status_code == 400 and "access-control-allow-origin" not in r.headers
    r = httpx.get(f"{url}/health", headers={"Origin": PAGE})
    assert r.headers["access-control-allow-origin"] == PAGE


def test_a_stream_ticket_opens_one_stream_of_its_client(url: str) -> None:
    assert httpx.post(f"{url}/notifications/stream/ticket").status_code == 401
    r = httpx.post(f"{url}/notifications/stream/ticket", headers=B)
    assert r.status_code == 201 and r.json()["expires_in"] == 60
    ticket = r.json()["ticket"]
    ident = httpx.post(f"{url}/expressions", headers=B,
                       json={"expression": "newCD(title=T)"}).json()["id"]
    httpx.post(f"{url}/events", headers=A, json={"type": "newCD", "params": {"title": "Boy"}})
    with httpx.stream("GET", f"{url}/notifications/stream",
                      params={"ticket": ticket, "after": 0}) as stream:
        assert stream.status_code == 200
        lines = stream.iter_lines()
        line = next(lines)
        while not line.startswith("data:"):
            line = next(lines)
        assert f'"expression": "{ident}"' in line  # bob's, as the ticket was bob's
    again = httpx.get(f"{url}/notifications/stream", params={"ticket": ticket})
    assert again.status_code == 401 and "POST /notifications/stream/ticket" in again.text
    assert httpx.get(f"{url}/notifications", params={"ticket": ticket}).status_code == 401


def test_405_carries_allow(url: str) -> None:
    r = httpx.put(f"{url}/expressions", headers=A)
    assert r.status_code == 405 and r.headers["content-type"] == "application/problem+json"
    assert set(r.headers["allow"].split(", ")) == {"GET", "HEAD", "POST"}
    assert set(httpx.patch(f"{url}/notifications/stream/ticket").headers["allow"].split(", ")
               ) == {"POST"}


def test_limit_zero_and_null_time_are_refused(url: str) -> None:
    r = httpx.get(f"{url}/notifications", headers=A, params={"limit": 0})
    assert r.status_code == 400 and "at least 1" in r.json()["detail"]
    r = httpx.post(f"{url}/events", headers=A,
                   json={"type": "newCD", "params": {}, "time": None})
    assert r.status_code == 422 and "leave the field out" in r.json()["detail"]


def test_graph_counts_only_the_clients_own_nodes(url: str) -> None:
    before = httpx.get(f"{url}/graph", headers=A).json()
    httpx.post(f"{url}/expressions", headers=B,
               json={"expression": "SEQ(newBook(title=T), ANY(2, a(x=T), b(x=T), c(x=T)))"})
    assert httpx.get(f"{url}/graph", headers=A).json() == before
    mine = httpx.post(f"{url}/expressions", headers=A,
                      json={"expression": "SEQ(newBook(title=T), newDVD(title=T))"}).json()
    graph = httpx.get(f"{url}/graph", headers=A).json()
    assert graph["operators"] == before["operators"] + 1
    assert graph["expressions"][mine["id"]] == {"nodes": 3, "shared": 0}
