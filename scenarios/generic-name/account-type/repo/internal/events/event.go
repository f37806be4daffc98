package events

import "time"

// Event is a row of the transactional outbox.
type Event struct {
	ID string
	// Type is the routing key on the bus, "<aggregate>.<verb>", e.g. "account.opened".
	Type       string
	Aggregate  string
	OccurredAt time.Time
	Payload    map[string]any
}

type Outbox interface {
	Append(e Event) error
}
