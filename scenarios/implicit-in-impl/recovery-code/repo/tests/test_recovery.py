def test_code_works_once(client, enrolled_member):
    email, issued = enrolled_member
    first = client.post("/auth/recovery", json={"email": email, "recovery_token": issued[0]})
    assert first.status_code == 200
    assert first.json["remaining_codes"] == 9
    again = client.post("/auth/recovery", json={"email": email, "recovery_token": issued[0]})
    assert again.status_code == 401


def test_idempotent_retry_does_not_burn_a_code(client, enrolled_member):
    email, issued = enrolled_member
    body = {"email": email, "recovery_token": issued[1], "idempotency_token": "k-1"}
    a = client.post("/auth/recovery", json=body)
    b = client.post("/auth/recovery", json=body)
    assert a.json == b.json
    assert a.json["remaining_codes"] == 9


def test_lockout_after_five_failures(client, enrolled_member):
    email, _ = enrolled_member
    for _ in range(5):
        client.post("/auth/recovery", json={"email": email, "recovery_token": "00000-00000"})
    res = client.post("/auth/recovery", json={"email": email, "recovery_token": "00000-00000"})
    assert res.status_code == 429
