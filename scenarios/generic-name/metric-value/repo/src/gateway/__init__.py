"""HTTP and statsd ingestion for application metrics."""
