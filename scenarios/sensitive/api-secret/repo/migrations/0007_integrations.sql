-- +goose Up
CREATE TABLE integrations (
    id                      TEXT PRIMARY KEY,
    workspace_id            TEXT NOT NULL REFERENCES workspaces(id),
    provider                TEXT NOT NULL,
    api_key_id              TEXT NOT NULL,
    -- AES-256-GCM ciphertext under a per-workspace data key wrapped by KMS; no plaintext column.
    api_secret_ciphertext   BYTEA NOT NULL,
    api_secret_key_version  INTEGER NOT NULL,
    sync_interval_minutes   INTEGER NOT NULL DEFAULT 15,
    status                  TEXT NOT NULL,
    created_at              TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE integrations;
