package guard

import (
	"net/url"
	"strings"
)

// detectSecretsRules fill what gitleaks' default rules leave out: an AWS
// secret access key, an Azure storage account key and a URL carrying a
// password (a database URL, typically). Their patterns are those of Yelp's
// detect-secrets (aws.py, azure.py and basic_auth.py, Apache-2.0), as its Go
// port github.com/DefangLabs/secret-detector keeps them (pkg/detectors:
// aws_secret_key, azure, url_password), with that port's check on the URL.
// The URL's password must also pass gitleaks' entropy test (more than 3
// bits a character, as gitleaks asks of its generic secrets), so that
// placeholders ("CHANGE-ME", "password", "s3cret") are not refused.
var detectSecretsRules = []ruleData{
	{ID: "aws-secret-access-key", Description: "An AWS secret access key assigned to an AWS-named variable (detect-secrets AWSKeyDetector).",
		Regex: `(?:AWS|aws).{0,20}['\"]([0-9a-zA-Z\/+]{40})['\"]`, Keywords: []string{"aws"}, Line: true},
	// The same key where detect-secrets' pattern misses it, as AWS's own
	// files and APIs write it: unquoted in ~/.aws/credentials
	// (aws_secret_access_key = …) and named SecretAccessKey in JSON.
	{ID: "aws-secret-access-key", Description: "An AWS secret access key assigned to its own name, quoted or not.",
		Regex: `(?i)secret_?access_?key["']?\s*[:=]\s*["']?([0-9a-zA-Z\/+]{40})(?:[^0-9a-zA-Z\/+=]|$)`, SecretGroup: 1, Entropy: 3,
		Keywords: []string{"secret_access_key", "secretaccesskey"}, Line: true},
	{ID: "azure-storage-account-key", Description: "An Azure storage account access key (detect-secrets AzureStorageKeyDetector).",
		Regex: `AccountKey=([a-zA-Z0-9+\/=]{88})`, Keywords: []string{"accountkey="}},
	{ID: "url-with-password", Description: "A URL with a user and a password, such as a database URL (detect-secrets BasicAuthDetector).",
		Regex: `[a-z][a-z0-9+.-]+://[^:\s]*:([^@:\s]+)@[^\s'"\];]+`, SecretGroup: 1, Entropy: 3, Keywords: []string{"://"}, verify: urlHasPassword},
}

// urlHasPassword is the port's check: a password is there and is no
// placeholder of a shell or template variable.
func urlHasPassword(match string) bool {
	u, err := url.Parse(match)
	if err != nil || u.User == nil {
		return false
	}
	pwd, ok := u.User.Password()
	return ok && pwd != "" && !strings.HasPrefix(pwd, "$")
}
