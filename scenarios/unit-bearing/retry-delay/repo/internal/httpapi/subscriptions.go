package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/relaycorp/hookd/internal/subscriptions"
)

type Store interface {
	NewID() string
	Save(*subscriptions.Subscription) error
}

type subscriptionView struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	CreatedAt time.Time `json:"created_at"`
}

func CreateSubscription(store Store) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var p subscriptions.CreateParams
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			writeError(w, http.StatusBadRequest, "INVALID_JSON")
			return
		}
		s, err := subscriptions.New(store.NewID(), p, time.Now().UTC())
		switch {
		case errors.Is(err, subscriptions.ErrInvalidURL), errors.Is(err, subscriptions.ErrNoEvents),
			errors.Is(err, subscriptions.ErrDelayTooLong):
			writeError(w, http.StatusUnprocessableEntity, err.Error())
			return
		case err != nil:
			writeError(w, http.StatusInternalServerError, "INTERNAL")
			return
		}
		if err := store.Save(s); err != nil {
			writeError(w, http.StatusInternalServerError, "INTERNAL")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(subscriptionView{ID: s.ID, URL: s.URL, Events: s.Events, CreatedAt: s.CreatedAt})
	}
}

func writeError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code})
}
