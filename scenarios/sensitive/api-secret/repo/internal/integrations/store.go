package integrations

import (
	"context"
	"database/sql"
	"time"

	"github.com/pipeline-hq/connect/internal/crypto"
)

type Integration struct {
	ID           string
	WorkspaceID  string
	Provider     string
	APIKeyID     string
	APISecret    []byte // plaintext only in memory, between Open and use
	SyncInterval time.Duration
	Status       string
}

// Execer is satisfied by *sql.DB and *sql.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

type Store struct {
	DB     Execer
	Sealer crypto.Sealer
}

// Insert persists an integration. The API secret is sealed before it touches the database;
// the key id is public and stored as given.
func (s *Store) Insert(ctx context.Context, in Integration) error {
	ciphertext, keyVersion, err := s.Sealer.Seal(ctx, in.WorkspaceID, in.APISecret)
	if err != nil {
		return err
	}
	_, err = s.DB.ExecContext(ctx, `INSERT INTO integrations
		(id, workspace_id, provider, api_key_id, api_secret_ciphertext, api_secret_key_version, sync_interval_minutes, status)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		in.ID, in.WorkspaceID, in.Provider, in.APIKeyID, ciphertext, keyVersion,
		int(in.SyncInterval/time.Minute), in.Status)
	return err
}
