package match

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

type golden struct {
	Query, Country, Expect string
	MatchScore             float64 `json:"match_score"`
}

// match_score is the name similarity of the chosen entry: 1 for an exact match
// after normalisation (case, punctuation, legal-form abbreviations), falling
// towards 0 as the names diverge. It is never outside [0, 1].
func TestMatchScoreGolden(t *testing.T) {
	raw, _ := os.ReadFile("testdata/match_golden.json")
	var cases []golden
	_ = json.Unmarshal(raw, &cases)
	h := newTestHandler(t, "DE", "Acme GmbH", "Acme Logistics AG")
	for _, c := range cases {
		got := post(t, h, `{"name":"`+c.Query+`","country_code":"`+c.Country+`"}`)
		if got.LegalName != c.Expect || abs(got.MatchScore-c.MatchScore) > 0.01 {
			t.Errorf("%q: got %s %.2f", c.Query, got.LegalName, got.MatchScore)
		}
		if got.MatchScore < 0 || got.MatchScore > 1 {
			t.Errorf("%q: score %.2f out of range", c.Query, got.MatchScore)
		}
	}
}

func TestRegistrationNumberMatchScoresOne(t *testing.T) {
	h := newTestHandler(t, "DE", "Acme GmbH")
	got := post(t, h, `{"name":"whatever","country_code":"de","registration_number":"HRB 12345"}`)
	if got.MatchScore != 1 || got.MatchedOn != "registration_number" {
		t.Fatalf("got %+v", got)
	}
}

func post(t *testing.T, h *Handler, body string) Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.Match(rec, httptest.NewRequest("POST", "/companies/match", strings.NewReader(body)))
	var r Response
	_ = json.NewDecoder(rec.Body).Decode(&r)
	return r
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
