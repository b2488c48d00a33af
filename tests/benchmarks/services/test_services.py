"""The local services over real HTTP: CRUD per service, reset/state, world isolation, faults."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import httpx
import pytest

from forge_eval.benchmarks.services import WORLD_HEADER, ServiceCluster, ServiceStartError


@pytest.fixture(scope="module")
def cluster() -> Iterator[ServiceCluster]:
    with ServiceCluster() as running:
        yield running


def client(cluster: ServiceCluster, service: str, world: str) -> httpx.Client:
    return httpx.Client(base_url=cluster.url(service), headers={WORLD_HEADER: world}, timeout=10)


def reset(c: httpx.Client, state: dict, faults: list | None = None) -> None:
    r = c.post("/reset", json={"state": state, "faults": faults or []})
    assert r.status_code == 200, r.text


MAIL = {
    "owner": "me@x.io",
    "messages": [
        {"id": "m1", "sender": "ann@x.io", "subject": "Invoice 7", "body": "Amount due: $12"},
        {"id": "m2", "sender": "bob@x.io", "subject": "Lunch", "body": "Pizza at noon?"},
    ],
}


def test_health_lists_service_and_all_services_run(cluster: ServiceCluster) -> None:
    assert sorted(cluster.urls) == ["calendar", "contacts", "inventory", "kb", "mail", "tickets"]
    for name, url in cluster.urls.items():
        assert url.startswith("http://127.0.0.1:")
        health = httpx.get(url + "/health").json()
        assert (health["service"], health["status"]) == (name, "ok")


def test_mail_crud(cluster: ServiceCluster) -> None:
    c = client(cluster, "mail", "mail-crud")
    reset(c, MAIL)
    hits = c.get("/messages", params={"query": "invoice amount"}).json()
    assert [h["id"] for h in hits] == ["m1"] and "body" not in hits[0]
    assert c.get("/messages/M1").json()["body"] == "Amount due: $12"  # ids are case-insensitive
    sent = c.post("/messages", json={"to": "a@x.io, b@x.io", "subject": "Hi", "body": "yo"}).json()
    assert sent == {"id": "m3", "status": "sent", "to": ["a@x.io", "b@x.io"]}
    assert c.delete("/messages/m2").json() == {"id": "m2", "folder": "trash"}
    state = c.get("/state").json()["state"]
    folders = {m["id"]: (m["folder"], m["unread"]) for m in state["messages"]}
    assert folders == {"m1": ("inbox", False), "m2": ("trash", True), "m3": ("sent", False)}
    assert [m["id"] for m in c.get("/messages", params={"folder": "sent"}).json()] == ["m3"]
    r = c.post("/messages", json={"to": [], "subject": "x"})
    assert r.status_code == 422 and "to" in r.json()["error"]
    r = c.get("/messages/m99")
    assert r.status_code == 404 and r.json()["error"] == "no message with id 'm99'"


def test_calendar_crud_and_validation(cluster: ServiceCluster) -> None:
    c = client(cluster, "calendar", "cal")
    reset(c, {"events": [{"id": "ev-1", "title": "Standup", "date": "2026-03-02", "start": "09:00",
                          "end": "09:15"}]})
    created = c.post("/events", json={"title": "Review", "date": "2026-03-02", "start": "9:10",
                                      "end": "10:00", "attendees": "a@x.io"}).json()
    assert created["event"]["id"] == "ev-2" and created["event"]["start"] == "09:10"
    assert created["conflicts"] == ["ev-1"] and created["event"]["attendees"] == ["a@x.io"]
    moved = c.patch("/events/ev-2", json={"date": "2026-03-03"}).json()
    assert moved["event"]["date"] == "2026-03-03" and moved["conflicts"] == []
    assert [e["id"] for e in c.get("/events", params={"date": "2026-03-03"}).json()] == ["ev-2"]
    assert [e["id"] for e in c.get("/events", params={"query": "standup"}).json()] == ["ev-1"]
    bad = c.post("/events", json={"title": "X", "date": "2026-03-02", "start": "11:00", "end": "10:00"})
    assert bad.status_code == 422 and "must be after" in bad.json()["error"]
    missing = c.post("/events", json={"title": "X"})
    assert missing.status_code == 422 and "date" in missing.json()["error"]
    assert c.delete("/events/ev-1").json() == {"id": "ev-1", "deleted": True}
    assert [e["id"] for e in c.get("/state").json()["state"]["events"]] == ["ev-2"]


def test_tickets_crud(cluster: ServiceCluster) -> None:
    c = client(cluster, "tickets", "tix")
    reset(c, {"tickets": [{"id": "T-101", "title": "VPN down"}]})
    assert c.post("/tickets", json={"title": "Chair", "priority": "High"}).json() == {
        "id": "T-102", "status": "open", "priority": "high"}
    updated = c.patch("/tickets/t-101", json={"status": "closed", "resolution": "fixed"}).json()
    assert (updated["status"], updated["resolution"]) == ("closed", "fixed")
    assert c.post("/tickets/T-101/comments", json={"body": "done"}).json() == {"id": "T-101", "comments": 1}
    assert [t["id"] for t in c.get("/tickets", params={"status": "open"}).json()] == ["T-102"]
    bad = c.patch("/tickets/T-101", json={"priority": "sky-high"})
    assert bad.status_code == 422 and "priority" in bad.json()["error"]


def test_kb_contacts_inventory(cluster: ServiceCluster) -> None:
    kb = client(cluster, "kb", "misc")
    reset(kb, {"articles": [{"id": "kb-1", "title": "VPN", "body": "Tokens expire every 90 days."},
                            {"id": "kb-2", "title": "Printers", "body": "Use queue P1."}]})
    assert [a["id"] for a in kb.get("/articles", params={"query": "token"}).json()] == ["kb-1"]
    assert kb.patch("/articles/kb-2", json={"body": "Use queue P2."}).json()["body"] == "Use queue P2."

    contacts = client(cluster, "contacts", "misc")
    reset(contacts, {"contacts": [{"id": "c1", "name": "Ann Lee", "email": "ann@x.io"}]})
    assert contacts.post("/contacts", json={"name": "Bo Chan"}).json()["id"] == "c2"
    assert contacts.patch("/contacts/c1", json={"phone": "555"}).json()["phone"] == "555"
    assert [c["id"] for c in contacts.get("/contacts", params={"query": "chan"}).json()] == ["c2"]

    inv = client(cluster, "inventory", "misc")
    reset(inv, {"products": [
        {"sku": "S-1", "name": "Mouse", "stock": 1, "reorder_level": 5, "unit_price": 2.5},
        {"sku": "S-2", "name": "Cable", "stock": 9, "reorder_level": 5},
    ]})
    assert [p["sku"] for p in inv.get("/products", params={"low_stock": "true"}).json()] == ["S-1"]
    order = inv.post("/orders", json={"sku": "s-1", "quantity": 4}).json()
    assert (order["id"], order["sku"], order["total"]) == ("PO-1001", "S-1", 10.0)
    assert inv.post("/orders", json={"sku": "S-1", "quantity": 0}).status_code == 422


def test_reset_replaces_state_and_worlds_are_isolated(cluster: ServiceCluster) -> None:
    a, b = client(cluster, "mail", "world-a"), client(cluster, "mail", "world-b")
    reset(a, MAIL)
    reset(b, MAIL)
    a.post("/messages", json={"to": ["z@x.io"], "subject": "only in a"})
    assert len(a.get("/state").json()["state"]["messages"]) == 3
    assert len(b.get("/state").json()["state"]["messages"]) == 2
    reset(a, MAIL)
    assert len(a.get("/state").json()["state"]["messages"]) == 2
    assert a.delete("/world").json() == {"deleted": True}
    missing = a.get("/messages")
    assert missing.status_code == 404 and "POST /reset" in missing.json()["error"]
    assert len(b.get("/messages").json()) == 2


def test_fault_fires_exactly_once_and_leaves_state_alone(cluster: ServiceCluster) -> None:
    c = client(cluster, "mail", "faulty")
    reset(c, MAIL, faults=[{"endpoint": "send", "status": 503}])
    assert c.get("/messages").status_code == 200  # other endpoints are unaffected
    first = c.post("/messages", json={"to": ["a@x.io"], "subject": "s"})
    assert first.status_code == 503 and first.json()["injected"] is True
    assert len(c.get("/state").json()["state"]["messages"]) == 2
    assert c.post("/messages", json={"to": ["a@x.io"], "subject": "s"}).status_code == 200
    assert c.post("/messages", json={"to": ["a@x.io"], "subject": "s"}).status_code == 200
    doc = c.get("/state").json()
    assert doc["calls"] == {"search": 1, "send": 3}
    assert doc["faults"][0]["fired"] == 1 and doc["faults"][0]["remaining"] == 0
    assert len(doc["state"]["messages"]) == 4


def test_fault_times_and_status(cluster: ServiceCluster) -> None:
    c = client(cluster, "kb", "rate-limited")
    reset(c, {"articles": []}, faults=[{"endpoint": "search", "status": 429, "times": 2, "message": "slow"}])
    codes = [c.get("/articles").status_code for _ in range(3)]
    assert codes == [429, 429, 200]
    bad = c.post("/reset", json={"faults": [{"endpoint": "publish"}]})
    assert bad.status_code == 422 and "valid endpoints" in bad.json()["error"]
    invalid_state = c.post("/reset", json={"state": {"articles": [{"id": "x"}]}})
    assert invalid_state.status_code == 422 and "title" in invalid_state.json()["error"]


def test_port_in_use_is_a_clean_error() -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        with pytest.raises(ServiceStartError, match=f"mail service on 127.0.0.1:{port}") as err:
            ServiceCluster(["mail"], ports={"mail": port}).start()
        assert err.value.hint and "port 0" in err.value.hint
    finally:
        holder.close()


def test_fixed_port_start_stop_and_restart() -> None:
    cluster = ServiceCluster(["kb"])
    cluster.start()
    url = cluster.url("kb")
    assert httpx.get(url + "/health").status_code == 200
    cluster.start()  # idempotent
    assert cluster.url("kb") == url
    with pytest.raises(ServiceStartError, match="'mail' is not running"):
        cluster.url("mail")
    cluster.stop()
    assert not cluster.running
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/health")


def test_shared_cluster_is_one_instance_across_threads() -> None:
    seen: list[ServiceCluster] = []
    threads = [threading.Thread(target=lambda: seen.append(ServiceCluster.shared())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 4 and all(s is seen[0] for s in seen) and seen[0].running
