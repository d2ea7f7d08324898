// Package guardtest makes credentials for tests, fresh at every call, so
// that none is ever written into the repository: each has the shape its
// provider gives it, with random characters where the secret is.
package guardtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
)

// Credential is a line or block of text holding one credential, and the
// rule that must find it.
type Credential struct {
	Kind string // what it is, for test names
	Rule string // the guard rule that finds it
	Text string // a line or block as it would sit in a file, ending in "\n"
	// Secret is the part that must never be echoed.
	Secret string
}

const (
	upper   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower   = "abcdefghijklmnopqrstuvwxyz"
	digits  = "0123456789"
	alnum   = upper + lower + digits
	base32  = upper + "234567"
	b64     = alnum + "+/"
	urlsafe = alnum + "-_"
)

// Random returns n characters drawn from alphabet.
func Random(alphabet string, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}

func wrap64(s string) string {
	var lines []string
	for len(s) > 64 {
		lines, s = append(lines, s[:64]), s[64:]
	}
	return strings.Join(append(lines, s), "\n")
}

// All returns one fresh credential of every kind the guard must refuse.
func All() []Credential {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	// The labels are built so that this file holds no key header.
	begin, end := "-----BEGIN ", "-----END "
	sshBody := append([]byte("openssh-key-v1\x00"), randomBytes(280)...)
	ssh := begin + "OPENSSH PRIVATE KEY-----\n" + wrap64(base64.StdEncoding.EncodeToString(sshBody)) + "\n" + end + "OPENSSH PRIVATE KEY-----\n"
	pgp := begin + "PGP PRIVATE KEY BLOCK-----\n\n" + wrap64(base64.StdEncoding.EncodeToString(randomBytes(400))) + "\n=" + Random(b64, 4) + "\n" + end + "PGP PRIVATE KEY BLOCK-----\n"

	awsID := "AKIA" + Random(base32, 16)
	awsSecret := Random(b64, 40)
	azure := base64.StdEncoding.EncodeToString(randomBytes(64))
	jwtHead := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	jwtBody := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"` + Random(alnum, 12) + `","iat":1700000000}`))
	jwt := jwtHead + "." + jwtBody + "." + Random(urlsafe, 43)
	anthropic := "sk-ant-" + "api03-" + Random(urlsafe, 93) + "AA"
	// Keys end in a letter or digit: gitleaks' rule wants a word boundary there.
	openai := "sk-" + "proj-" + Random(urlsafe, 74) + "T3Blbk" + "FJ" + Random(urlsafe, 73) + Random(alnum, 1)
	github := "gh" + "p_" + Random(alnum, 36)
	gitlab := "gl" + "pat-" + Random(urlsafe, 20)
	slack := "xo" + "xb-" + Random(digits, 12) + "-" + Random(digits, 12) + "-" + Random(alnum, 24)
	stripe := "sk_" + "live_" + Random(alnum, 24)
	google := "AI" + "za" + Random(urlsafe, 35)
	dbPass := Random(alnum, 16)
	return []Credential{
		{Kind: "pem", Rule: "private-key", Text: pemKey, Secret: strings.Split(pemKey, "\n")[1]},
		{Kind: "openssh", Rule: "private-key", Text: ssh, Secret: strings.Split(ssh, "\n")[1]},
		{Kind: "pgp", Rule: "private-key", Text: pgp, Secret: strings.Split(pgp, "\n")[2]},
		{Kind: "aws", Rule: "aws-access-token", Text: "aws_access_key_id = " + awsID + "\naws_secret_access_key = \"" + awsSecret + "\"\n", Secret: awsID},
		{Kind: "aws-secret", Rule: "aws-secret-access-key", Text: "AWS_SECRET_ACCESS_KEY=\"" + awsSecret + "\"\n", Secret: awsSecret},
		// As ~/.aws/credentials and the AWS APIs' JSON write it: unquoted,
		// or named SecretAccessKey.
		{Kind: "aws-credentials-file", Rule: "aws-secret-access-key", Text: "aws_secret_access_key = " + awsSecret + "\n", Secret: awsSecret},
		{Kind: "aws-secret-json", Rule: "aws-secret-access-key", Text: "\"SecretAccessKey\": \"" + awsSecret + "\",\n", Secret: awsSecret},
		{Kind: "google", Rule: "gcp-api-key", Text: "GOOGLE_API_KEY=" + google + "\n", Secret: google},
		{Kind: "azure", Rule: "azure-storage-account-key", Text: "DefaultEndpointsProtocol=https;AccountName=" + strings.ToLower(Random(lower, 10)) + ";AccountKey=" + azure + ";EndpointSuffix=core.windows.net\n", Secret: azure},
		{Kind: "anthropic", Rule: "anthropic-api-key", Text: "ANTHROPIC_API_KEY=" + anthropic + "\n", Secret: anthropic},
		{Kind: "openai", Rule: "openai-api-key", Text: "OPENAI_API_KEY=" + openai + "\n", Secret: openai},
		{Kind: "github", Rule: "github-pat", Text: "token: " + github + "\n", Secret: github},
		{Kind: "gitlab", Rule: "gitlab-pat", Text: "token: " + gitlab + "\n", Secret: gitlab},
		{Kind: "slack", Rule: "slack-bot-token", Text: "SLACK_BOT_TOKEN=" + slack + "\n", Secret: slack},
		{Kind: "stripe", Rule: "stripe-access-token", Text: "stripe key " + stripe + "\n", Secret: stripe},
		{Kind: "jwt", Rule: "jwt", Text: "Authorization: Bearer " + jwt + "\n", Secret: jwt},
		{Kind: "database-url", Rule: "url-with-password", Text: "DATABASE_URL=postgres://app:" + dbPass + "@db.internal:5432/app\n", Secret: dbPass},
	}
}

// One returns a fresh credential of the given kind.
func One(kind string) Credential {
	for _, c := range All() {
		if c.Kind == kind {
			return c
		}
	}
	panic("guardtest: no credential kind " + kind)
}
