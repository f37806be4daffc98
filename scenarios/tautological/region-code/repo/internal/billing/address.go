package billing

// Address is the invoicing address of a workspace's billing contact.
type Address struct {
	Line1 string `json:"line1"`
	City  string `json:"city"`
	// RegionCode is the ISO 3166-2 subdivision (e.g. "US-CA", "DE-BY"); it only selects
	// the sales-tax rate and has nothing to do with where data is stored.
	RegionCode  string `json:"region_code"`
	PostalCode  string `json:"postal_code"`
	CountryCode string `json:"country_code"`
}
