package integrations

import (
	"bytes"
	"context"
	"database/sql"
	"testing"
)

type fakeDB struct{ args [][]any }

func (f *fakeDB) ExecContext(_ context.Context, _ string, args ...any) (sql.Result, error) {
	f.args = append(f.args, args)
	return nil, nil
}

type recordingSealer struct{ sealed [][]byte }

func (s *recordingSealer) Seal(_ context.Context, _ string, p []byte) ([]byte, int, error) {
	s.sealed = append(s.sealed, p)
	return append([]byte("enc:"), p...), 3, nil
}

func (s *recordingSealer) Open(_ context.Context, _ string, c []byte, _ int) ([]byte, error) {
	return bytes.TrimPrefix(c, []byte("enc:")), nil
}

func TestInsertSealsTheSecretOnly(t *testing.T) {
	sealer := &recordingSealer{}
	db := &fakeDB{}
	store := &Store{DB: db, Sealer: sealer}
	err := store.Insert(context.Background(), Integration{ID: "int_1", WorkspaceID: "ws_1",
		Provider: "hubspot", APIKeyID: "kid_123", APISecret: []byte("s3cr3t"), Status: "active"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sealer.sealed) != 1 || string(sealer.sealed[0]) != "s3cr3t" {
		t.Fatalf("want exactly the api secret sealed, got %q", sealer.sealed)
	}
	if got := db.args[0][3]; got != "kid_123" {
		t.Fatalf("api_key_id should be stored as given, got %v", got)
	}
}
