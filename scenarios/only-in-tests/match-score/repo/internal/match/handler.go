package match

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/veritas-data/namematch"
)

type Request struct {
	Name               string `json:"name"`
	CountryCode        string `json:"country_code"`
	RegistrationNumber string `json:"registration_number,omitempty"`
}

type Response struct {
	CompanyID  string  `json:"company_id"`
	LegalName  string  `json:"legal_name"`
	MatchScore float64 `json:"match_score"`
	MatchedOn  string  `json:"matched_on"`
}

type Registry interface {
	ByRegistrationNumber(country, number string) (Company, bool)
	Candidates(country string) ([]Company, error)
}

type Company struct {
	ID, LegalName, Country string
}

type Handler struct {
	Registry Registry
	Matcher  *namematch.Matcher
}

func (h *Handler) Match(w http.ResponseWriter, r *http.Request) {
	var req Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.CountryCode) != 2 {
		writeErr(w, http.StatusBadRequest, "INVALID_COUNTRY")
		return
	}
	country := strings.ToUpper(req.CountryCode)
	if req.RegistrationNumber != "" {
		if c, ok := h.Registry.ByRegistrationNumber(country, req.RegistrationNumber); ok {
			writeJSON(w, Response{CompanyID: c.ID, LegalName: c.LegalName, MatchScore: 1, MatchedOn: "registration_number"})
			return
		}
	}
	candidates, err := h.Registry.Candidates(country)
	if err != nil {
		writeErr(w, http.StatusServiceUnavailable, "INDEX_REBUILDING")
		return
	}
	names := make([]string, len(candidates))
	for i, c := range candidates {
		names[i] = c.LegalName
	}
	best, ok := h.Matcher.Best(req.Name, names)
	if !ok {
		writeErr(w, http.StatusNotFound, "NO_MATCH")
		return
	}
	c := candidates[best.Index]
	writeJSON(w, Response{CompanyID: c.ID, LegalName: c.LegalName, MatchScore: best.Value, MatchedOn: "name"})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code})
}
