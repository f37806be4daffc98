import pytest

from tests.fakes import FakeGatekeep


@pytest.fixture
def gateway(app_with):
    fake = FakeGatekeep()
    app_with(gatekeep=fake)
    return fake


def test_limit_admits_exactly_the_limit(client, gateway, space):
    res = client.put(f"/spaces/{space.id}/upload-policy", json={"max_upload_size": 512})
    assert res.status_code == 200
    assert gateway.accepts(space.bucket, 512 * 1024)
    assert not gateway.accepts(space.bucket, 512 * 1024 + 1)


def test_free_plan_ceiling_is_ten_mebibytes(client, gateway, free_space):
    ok = client.put(f"/spaces/{free_space.id}/upload-policy", json={"max_upload_size": 10 * 1024})
    assert ok.status_code == 200
    too_big = client.put(f"/spaces/{free_space.id}/upload-policy", json={"max_upload_size": 10 * 1024 + 1})
    assert too_big.status_code == 422
    assert too_big.json()["detail"]["code"] == "LIMIT_TOO_LARGE"


def test_unknown_space(client, gateway):
    res = client.put("/spaces/nope/upload-policy", json={"max_upload_size": 1})
    assert res.status_code == 404
