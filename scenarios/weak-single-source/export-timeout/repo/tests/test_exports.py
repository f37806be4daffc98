from unittest import mock

import pytest

from reports import exports
from reports.catalog import Report


@pytest.fixture
def report():
    with mock.patch.object(exports, "find_report", return_value=Report("r1", "Churn", "ana")):
        yield


def test_unknown_format_is_rejected(report):
    with pytest.raises(exports.ExportError) as e:
        exports.start_export("r1", "pdf", None, None)
    assert e.value.code == "UNSUPPORTED_FORMAT"


def test_timeout_is_passed_through_to_the_queue(report):
    with mock.patch.object(exports, "_queue") as q:
        q.depth.return_value = 0
        exports.start_export("r1", "csv", 30, None)
    assert q.enqueue.call_args.kwargs["timeout"] == 30


def test_default_timeout_when_omitted(report):
    with mock.patch.object(exports, "_queue") as q:
        q.depth.return_value = 0
        exports.start_export("r1", "csv", None, None)
    assert q.enqueue.call_args.kwargs["timeout"] == exports.DEFAULT_EXPORT_TIMEOUT


def test_full_queue(report):
    with mock.patch.object(exports, "_queue") as q:
        q.depth.return_value = 501
        with pytest.raises(exports.ExportError) as e:
            exports.start_export("r1", "csv", None, None)
    assert e.value.status == 503
