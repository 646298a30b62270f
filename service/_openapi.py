"""The service's OpenAPI 3.0 document (issue 31, item 9), written by hand: the routes take
markup as often as JSON and answer problem documents, which a generator from handler
signatures would not describe. 3.0 rather than 3.1: the Swagger UI of ``/docs``
(``swagger-ui-bundle``, Swagger UI 4) renders 3.0 only. ``tests/service/test_web.py`` validates it
(``openapi-spec-validator``) and checks it names every route and method the application
serves; ``tools/schemathesis_service.sh`` runs schemathesis against it on a live server."""

from __future__ import annotations

from typing import Any

from ._db import DISCARD_RANGES
from ._limits import Limits
from ._web import TICKET_LIFETIME

__all__ = ["openapi"]

_REF = "#/components/"


def _problem(description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/problem+json": {"schema": {"$ref": _REF + "schemas/Problem"}}}}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _answers(*codes: str, **more: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = dict(more)
    for code in codes:
        out[code] = {"$ref": _REF + "responses/" + code}
    return out


def _cursor(name: str, description: str, *, required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "description": description,
            "schema": {"type": "integer", "minimum": 0, "maximum": 2 ** 63 - 1}}


def openapi(limits: Limits | None = None, *, secured: bool = True) -> dict[str, Any]:
    """The document of a service with ``limits`` (their values are in the descriptions);
    ``secured``: clients send a bearer token (a service started without ``--token`` is open)."""
    lim = limits or Limits()
    write = ("400", "401", "408", "413", "503", "507")
    scalar = {"oneOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]}
    expression = {"type": "object", "required": ["id", "expression", "variables", "callback"],
                  "properties": {
                      "id": {"type": "string"},
                      "expression": {"type": "string", "description": "the text form"},
                      "variables": {"type": "object", "additionalProperties": scalar},
                      "callback": {"type": "string", "format": "uri", "nullable": True},
                      "markup": {"type": "string",
                                 "description": "the markup registered, if it was"}}}
    notification = {"type": "object", "required": ["cursor", "expression", "bindings", "events",
                                                   "next"],
                    "properties": {
                        "cursor": {"type": "integer"},
                        "expression": {"type": "string"},
                        "bindings": {"type": "object", "additionalProperties": scalar},
                        "events": {"type": "array", "items": {"type": "object"}},
                        "next": {"type": "string", "nullable": True}}}
    event = {"type": "object", "required": ["type", "params"], "additionalProperties": False,
             "properties": {
                 "type": {"type": "string", "minLength": 1,
                          "description": "the event type (an XML name, or "
                          "a document event type such as ins(/order/item))"},
                 "params": {"type": "object", "additionalProperties": scalar},
                 "time": {"type": "number", "description": "seconds; carried to the "
                          "notification, orders nothing; leave it out for none (null is "
                          "refused)"}}}
    registration = {"type": "object", "required": ["expression"], "additionalProperties": False,
                    "properties": {
                        "expression": {"type": "string", "description": "the text form, e.g. "
                                       "SEQ(newCD(title=T), newMusicDVD(title=T))"},
                        "variables": {"type": "object", "additionalProperties": scalar,
                                      "description": "values of the input variables"},
                        "callback": {"type": "string", "format": "uri",
                                     "description": "a webhook: each notification POSTed "
                                     "there"}}}
    problem = {"type": "object", "required": ["type", "title", "status", "detail"],
               "properties": {
                   "type": {"type": "string"}, "title": {"type": "string"},
                   "status": {"type": "integer"}, "detail": {"type": "string"},
                   "line": {"type": "integer"}, "column": {"type": "integer"},
                   "limit": {"type": "string", "description": "the limit refused (quotas, "
                             "timeouts, connections)"},
                   "quota": {"type": "number", "description": "its value"},
                   "option": {"type": "string",
                              "description": "the xmlevents serve option raising it"}}}
    responses = {
        "400": _problem("malformed JSON, expression text or markup, or query"),
        "401": _problem("no bearer token, or one that is not valid"),
        "403": _problem(f"a quota: at most {lim.max_expressions:,} expressions a client "
                        "(limit, quota and option say which and how to raise it)"),
        "404": _problem("no such expression (another client's ids are not found either)"),
        "408": _problem(f"the body did not arrive within {lim.body_timeout:g} s"),
        "413": _problem(f"a body over 1 MiB, or over {lim.max_events:,} events"),
        "415": _problem("a content type other than JSON or XML"),
        "422": _problem("a well-formed request that cannot be taken"),
        "503": _problem("the database is busy (Retry-After), or too many connections"),
        "507": _problem("the database cannot grow (the disk is full)"),
    }
    ident = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
    paths: dict[str, Any] = {
        "/expressions": {
            "post": {"summary": "Register an expression", "operationId": "register",
                     "requestBody": {"required": True, "content": {
                         "application/json": {"schema": registration},
                         "application/xml": {"schema": {
                             "type": "string", "description": "R3-style markup"}}}},
                     "responses": _answers(*write, "403", "415", "422", **{
                         "201": _json({"type": "object", "required": ["id"],
                                       "properties": {"id": {"type": "string"}}},
                                      "registered; Location names it")})},
            "get": {"summary": "The client's expressions", "operationId": "listExpressions",
                    "responses": _answers("401", **{"200": _json(
                        {"type": "object", "required": ["expressions"],
                         "properties": {"expressions": {"type": "array", "items": expression}}},
                        "oldest first")})}},
        "/expressions/{id}": {
            "parameters": [ident],
            "get": {"summary": "One expression", "operationId": "getExpression",
                    "responses": _answers("401", "404", **{"200": _json(expression,
                                                                        "the expression")})},
            "delete": {"summary": "Unregister an expression", "operationId": "unregister",
                       "responses": _answers("401", "404", "503", "507", **{
                           "204": {"description": "unregistered"}})}},
        "/events": {
            "post": {"summary": "Signal events", "operationId": "signal",
                     "description": f"One event or a list of 1 to {lim.max_events:,}, checked "
                                    "whole before any is applied.",
                     "requestBody": {"required": True, "content": {"application/json": {
                         "schema": {"oneOf": [event, {"type": "array", "items": event,
                                                      "minItems": 1,
                                                      "maxItems": lim.max_events}]}}}},
                     "responses": _answers(*write, "422", **{"202": _json(
                         {"type": "object", "required": ["accepted"],
                          "properties": {"accepted": {"type": "integer"}}},
                         "applied, in order")})}},
        "/notifications": {
            "get": {"summary": "The client's notifications, oldest first",
                    "operationId": "listNotifications",
                    "parameters": [
                        _cursor("after", "only those after this cursor"),
                        {"name": "limit", "in": "query", "description": "at most this many "
                         "(default 1,000; at most 10,000 are listed at once)",
                         "schema": {"type": "integer", "minimum": 1,
                                    "maximum": 2 ** 63 - 1}}],
                    "responses": _answers("400", "401", **{"200": _json(
                        {"type": "object", "required": ["notifications", "discarded"],
                         "properties": {
                             "notifications": {"type": "array", "items": notification},
                             "discarded": {"type": "integer", "description": "how many after "
                                           "`after` the retention quota discarded (at most "
                                           f"{lim.max_retained:,} kept a client; where `after` "
                                           "falls inside a client's oldest discards, merged "
                                           f"past {DISCARD_RANGES} ranges of cursors, all of "
                                           "them)"}}},
                        "the notifications")})},
            "delete": {"summary": "Delete the client's notifications up to a cursor",
                       "operationId": "deleteNotifications",
                       "parameters": [_cursor("through", "the last to delete", required=True)],
                       "responses": _answers("400", "401", "503", "507", **{
                           "204": {"description": "deleted: not listed again"}})}},
        "/notifications/stream": {
            "get": {"summary": "The client's notifications as Server-Sent Events",
                    "operationId": "stream",
                    "description": "id: the cursor; event: notification (data: the JSON), a "
                                   "comment every 15 s of silence, a last shutdown event. A "
                                   "browser's EventSource authenticates with ?ticket=.",
                    "security": [{"bearer": []}, {"ticket": []}] if secured else [],
                    "parameters": [
                        _cursor("after", "resume after this cursor"),
                        {"name": "Last-Event-ID", "in": "header",
                         "schema": {"type": "string"}, "description": "resume after it"}],
                    "responses": _answers("400", "401", **{"200": {
                        "description": "the stream",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}}}})}},
        "/notifications/stream/ticket": {
            "post": {"summary": "A ticket for one stream (for EventSource)",
                     "operationId": "streamTicket",
                     "responses": _answers("401", **{"201": _json(
                         {"type": "object", "required": ["ticket", "expires_in"],
                          "properties": {"ticket": {"type": "string"},
                                         "expires_in": {"type": "number"}}},
                         f"good for one stream opened within {TICKET_LIFETIME:g} s")})}},
        "/graph": {
            "get": {"summary": "Node counts of the client's expressions",
                    "operationId": "graph",
                    "responses": _answers("401", **{"200": _json(
                        {"type": "object",
                         "required": ["nodes", "leaves", "operators", "nodes_without_sharing",
                                      "expressions"],
                         "properties": {k: {"type": "integer"} for k in (
                             "nodes", "leaves", "operators", "nodes_without_sharing")} | {
                             "expressions": {"type": "object", "additionalProperties": {
                                 "type": "object", "properties": {
                                     "nodes": {"type": "integer"},
                                     "shared": {"type": "integer"}}}}}},
                        "with and without sharing, over the client's own expressions")})}},
        "/health": {"get": {"summary": "Whether the service answers", "operationId": "health",
                            "security": [],
                            "responses": {"200": _json({"type": "object", "properties": {
                                "ok": {"type": "boolean", "enum": [True]}}}, "it does")}}},
        "/openapi.json": {"get": {"summary": "This document", "operationId": "openapi",
                                  "security": [],
                                  "responses": {"200": _json({"type": "object"},
                                                             "OpenAPI 3.0")}}},
        "/docs": {"get": {"summary": "The interactive page (Swagger UI)",
                          "operationId": "docs", "security": [],
                          "responses": {"200": {"description": "HTML", "content": {
                              "text/html": {"schema": {"type": "string"}}}}}}},
    }
    doc: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": "xmlevents detection service", "version": "1",
                 "description": "SNOOP-R (Alferes and Tagni): register event expressions, "
                                "signal events, read detections. Errors are RFC 9457 problem "
                                "documents."},
        "paths": paths,
        "components": {"schemas": {"Problem": problem}, "responses": responses,
                       "securitySchemes": {
                           "bearer": {"type": "http", "scheme": "bearer",
                                      "description": "xmlevents serve --token NAME=SECRET"},
                           "ticket": {"type": "apiKey", "in": "query", "name": "ticket",
                                      "description": "from POST /notifications/stream/ticket; "
                                                     "GET /notifications/stream only"}}},
    }
    if secured:
        doc["security"] = [{"bearer": []}]
    else:
        for item in paths.values():
            for op in item.values():
                if isinstance(op, dict) and "responses" in op:
                    op["responses"].pop("401", None)
    return doc
