package accounts

import "errors"

// Kind is the product an account is opened as. It decides who may hold the account and
// which terms apply; it cannot be changed after opening.
type Kind string

const (
	KindPersonal Kind = "personal" // one natural person, for private use
	KindBusiness Kind = "business" // a registered company; needs company_number
	KindJoint    Kind = "joint"    // two natural persons with equal rights; needs co_holder_id
)

var (
	ErrOwnerNotFound       = errors.New("OWNER_NOT_FOUND")
	ErrUnsupportedKind     = errors.New("UNSUPPORTED_ACCOUNT_TYPE")
	ErrMissingHolderDetail = errors.New("MISSING_HOLDER_DETAILS")
)

type Account struct {
	ID             string
	OwnerID        string
	CoHolderID     string
	Kind           Kind
	Currency       string
	CompanyNumber  string
	OverdraftLimit int64 // minor units
	MonthlyFee     int64 // minor units
}
