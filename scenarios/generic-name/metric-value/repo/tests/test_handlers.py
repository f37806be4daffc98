import pytest
from flask import Flask

from gateway.buffer import WriteBuffer
from gateway.handlers import bp
from gateway.statsd_bridge import parse_line


@pytest.fixture
def client():
    app = Flask(__name__)
    app.extensions["buffer"] = WriteBuffer(capacity=2)
    app.register_blueprint(bp)
    return app.test_client(), app.extensions["buffer"]


def test_sample_is_buffered_as_sent(client):
    http, buffer = client
    resp = http.post("/v1/metrics", json={"name": "jobs.queue", "value": 3}, headers={"X-Project": "p1"})
    assert resp.status_code == 202
    (point,) = buffer.drain()
    assert point.value == 3.0 and point.project == "p1"


def test_bad_name_is_rejected(client):
    http, _ = client
    resp = http.post("/v1/metrics", json={"name": "Jobs Queue", "value": 1}, headers={"X-Project": "p1"})
    assert resp.status_code == 422


def test_statsd_counter_is_scaled_by_rate():
    point = parse_line("p1", "jobs.done:2|c|@0.5")
    assert point.value == 4.0
