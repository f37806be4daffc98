from tests.factories import make_order


def test_list_orders_requires_session(client):
    assert client.get("/orders").status_code == 401


def test_list_orders_pages(client, session_headers, db):
    for _ in range(3):
        make_order(db, customer_id="cus_1")
    first = client.get("/orders?limit=2", headers=session_headers("cus_1")).json()
    assert len(first["orders"]) == 2
    second = client.get(f"/orders?limit=2&cursor={first['next_cursor']}",
                        headers=session_headers("cus_1")).json()
    assert len(second["orders"]) == 1
    assert second["next_cursor"] is None


def test_bad_cursor(client, session_headers):
    res = client.get("/orders?cursor=%%%", headers=session_headers("cus_1"))
    assert res.status_code == 400
