package search

// Hit is one row in the back-office search results.
type Hit struct {
	CompanyID string `json:"company_id"`
	LegalName string `json:"legal_name"`
	// Score is the full-text relevance as a percentage (0–100), for display only.
	Score int `json:"score"`
}

func toHits(rows []row) []Hit {
	hits := make([]Hit, 0, len(rows))
	for _, r := range rows {
		hits = append(hits, Hit{CompanyID: r.id, LegalName: r.name, Score: int(r.rank * 100)})
	}
	return hits
}
