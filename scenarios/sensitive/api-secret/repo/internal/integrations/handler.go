package integrations

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"time"
)

var ErrRejected = errors.New("credentials rejected")

type Verifier interface {
	Verify(ctx context.Context, provider, keyID string, secret []byte) error
}

type Handler struct {
	Store    *Store
	Verifier Verifier
	Config   Config
	NewID    func() string
}

type createRequest struct {
	Provider     string `json:"provider"`
	APIKeyID     string `json:"api_key_id"`
	APISecret    string `json:"api_secret"`
	SyncInterval int    `json:"sync_interval"`
}

func (h Handler) Create(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	if !slices.Contains(h.Config.Providers, req.Provider) {
		writeJSON(w, 422, map[string]string{"code": "UNKNOWN_PROVIDER", "message": "The provider is not supported."})
		return
	}
	switch err := h.Verifier.Verify(r.Context(), req.Provider, req.APIKeyID, []byte(req.APISecret)); {
	case errors.Is(err, ErrRejected):
		writeJSON(w, 422, map[string]string{"code": "CREDENTIALS_REJECTED", "message": "The CRM did not accept the key pair."})
		return
	case err != nil:
		writeJSON(w, 502, map[string]string{"code": "PROVIDER_UNREACHABLE", "message": "The CRM could not be reached to check the credentials."})
		return
	}
	interval := req.SyncInterval
	if interval == 0 {
		interval = h.Config.DefaultSyncInterval
	}
	in := Integration{ID: h.NewID(), WorkspaceID: r.Header.Get("X-Workspace"), Provider: req.Provider,
		APIKeyID: req.APIKeyID, APISecret: []byte(req.APISecret),
		SyncInterval: time.Duration(interval) * time.Minute, Status: "active"}
	if err := h.Store.Insert(r.Context(), in); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	// The response never echoes the secret.
	writeJSON(w, 201, map[string]string{"integration_id": in.ID, "status": in.Status})
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
