package integrations

// Config of the integrations module. SecretName is the name of the Kubernetes Secret that
// holds the KMS key alias; it is a reference, not key material.
type Config struct {
	SecretName          string
	DefaultSyncInterval int // minutes
	Providers           []string
}

var DefaultConfig = Config{
	SecretName:          "connect-kms-alias",
	DefaultSyncInterval: 15,
	Providers:           []string{"hubspot", "pipedrive", "salesforce"},
}
