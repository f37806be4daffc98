package session

import (
	"os"
	"strconv"
	"time"
)

// Config holds storefront session settings.
type Config struct {
	// Timeout is the idle timeout of a storefront session, in seconds.
	Timeout int `json:"timeout"`
}

func FromEnv() Config {
	c := Config{Timeout: 1800}
	if v, err := strconv.Atoi(os.Getenv("SESSION_TIMEOUT")); err == nil && v > 0 {
		c.Timeout = v
	}
	return c
}

// IdleExpiry is when a session last touched at `last` expires.
func (c Config) IdleExpiry(last time.Time) time.Time {
	return last.Add(time.Duration(c.Timeout) * time.Second)
}
