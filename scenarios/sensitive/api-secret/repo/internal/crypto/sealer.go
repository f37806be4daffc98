package crypto

import "context"

// Sealer encrypts values that must never be stored or logged in clear: credentials,
// signing keys, tokens. Implemented by the KMS envelope sealer in production.
type Sealer interface {
	Seal(ctx context.Context, workspaceID string, plaintext []byte) (ciphertext []byte, keyVersion int, err error)
	Open(ctx context.Context, workspaceID string, ciphertext []byte, keyVersion int) ([]byte, error)
}
