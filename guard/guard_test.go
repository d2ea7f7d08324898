package guard_test

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	mathrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/guard/guardtest"
)

func TestEveryKind(t *testing.T) {
	for _, c := range guardtest.All() {
		t.Run(c.Kind, func(t *testing.T) {
			text := "# notes\n\nsome text before\n" + c.Text + "and after\n"
			got := guard.Scan(text)
			if len(got) == 0 {
				t.Fatalf("no finding in %d bytes holding a %s credential", len(text), c.Kind)
			}
			if got[0].Rule != c.Rule || got[0].Line != 4 {
				t.Errorf("first finding %v, want rule %s at line 4", got[0], c.Rule)
			}
			if s := fmt.Sprint(got); strings.Contains(s, c.Secret) {
				t.Errorf("findings %s hold the secret", s)
			}
		})
	}
}

func TestScanChange(t *testing.T) {
	c := guardtest.One("github")
	base := strings.Repeat("an ordinary line of notes\n", 200)
	withSecret := base[:26*100] + c.Text + base[26*100:]
	t.Run("AddedLine", func(t *testing.T) {
		got := guard.ScanChange(base, withSecret)
		if len(got) != 1 || got[0].Rule != "github-pat" || got[0].Line != 101 {
			t.Fatalf("got %v, want github-pat at line 101", got)
		}
	})
	t.Run("KeptLine", func(t *testing.T) {
		// The credential was in the base already (a store on warn): an
		// edit elsewhere adds nothing.
		edited := withSecret + "one more line\n"
		if got := guard.ScanChange(withSecret, edited); len(got) != 0 {
			t.Fatalf("got %v for a line the base had", got)
		}
	})
	t.Run("SplitByEdit", func(t *testing.T) {
		// A token completed by the edit is found: the changed bytes are
		// widened to their whole lines.
		half := base + c.Text[:len(c.Text)/2] + "\n"
		if got := guard.ScanChange(half, base+c.Text); len(got) != 1 {
			t.Fatalf("got %v, want the completed token", got)
		}
	})
	t.Run("Removed", func(t *testing.T) {
		if got := guard.ScanChange(withSecret, base); len(got) != 0 {
			t.Fatalf("got %v for a removal", got)
		}
	})
}

// TestScanChangeCompletesKeys: a private key whose BEGIN line the file
// already held (a template) is found when a save fills in its body and END
// line, and so is a key written a line per save: whatever the steps, the
// result of saves that each pass ScanChange never holds what Scan finds.
func TestScanChangeCompletesKeys(t *testing.T) {
	for _, kind := range []string{"pem", "openssh", "pgp"} {
		c := guardtest.One(kind)
		lines := strings.SplitAfter(c.Text, "\n")
		t.Run(kind+"/Template", func(t *testing.T) {
			head := "# deploy key\n\n"
			template := head + lines[0] + "(paste the key here)\n" + lines[len(lines)-2] + "notes after\n"
			if got := guard.Scan(template); len(got) != 0 {
				t.Fatalf("the template alone: %v", got)
			}
			filled := head + c.Text + "notes after\n"
			if got := guard.ScanChange(template, filled); len(got) == 0 || got[0].Rule != "private-key" {
				t.Fatalf("filling in the template: %v, want private-key", got)
			}
			// Only the body changes: BEGIN and END are both unchanged.
			bodyOnly := head + lines[0] + strings.Join(lines[1:len(lines)-2], "") + lines[len(lines)-2] + "notes after\n"
			if got := guard.ScanChange(template, bodyOnly); len(got) == 0 {
				t.Fatalf("filling in the body between kept BEGIN and END lines: no finding")
			}
		})
		t.Run(kind+"/LinePerSave", func(t *testing.T) {
			saved := "# notes\n"
			for i, l := range lines {
				next := saved + l
				if got := guard.ScanChange(saved, next); len(got) > 0 {
					if got[0].Rule != "private-key" {
						t.Fatalf("line %d: %v", i, got)
					}
					return // refused: the saved text stays as it was
				}
				saved = next
			}
			t.Fatalf("every line passed; a full scan of the result finds %v", guard.Scan(saved))
		})
		t.Run(kind+"/Inserted", func(t *testing.T) {
			// The body goes in before a trailing END line the file held.
			before := "x\n" + lines[0] + lines[len(lines)-2]
			after := "x\n" + c.Text
			if got := guard.ScanChange(before, after); len(got) == 0 {
				t.Fatalf("no finding")
			}
		})
	}
}

// TestAllowlisted: values gitleaks' allowlists keep (placeholders,
// documentation examples) are not findings.
func TestAllowlisted(t *testing.T) {
	for _, text := range []string{
		"aws_access_key_id = AKIA" + strings.Repeat("Q", 9) + "EXAMPLE\n", // the rule's EXAMPLE suffix
		"DATABASE_URL=postgres://app:$DB_PASSWORD@db:5432/app\n",          // a variable, not a password
		"url: postgres://memfs:CHANGE-ME@db.example:5432/memfs\n",         // a placeholder
		"token: ghp_" + strings.Repeat("a", 36) + "\n",                    // too little entropy
		// Placeholders the vendors' documentation writes (docs/guard.md).
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
		"AWS_SECRET_ACCESS_KEY=\"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"\n",
		"DATABASE_URL=postgres://user:changeme123@localhost:5432/app\n",
		"url: mysql://root:password123@db:3306/app\n",
		"postgres://admin:yourpassword@db.example/app\n",
		"SLACK_WEBHOOK=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX\n",
	} {
		if got := guard.Scan(text); len(got) != 0 {
			t.Errorf("%q: got %v", text, got)
		}
	}
}

// TestFalsePositiveCorpus: ordinary text gives no finding. The corpus is
// this repository's code and documentation, hashes, UUIDs, base64 of random
// bytes and prose about passwords and keys.
func TestFalsePositiveCorpus(t *testing.T) {
	docs := corpus(t)
	bytes, findings := 0, 0
	for name, doc := range docs {
		bytes += len(doc)
		if got := guard.Scan(doc); len(got) > 0 {
			findings++
			t.Errorf("%s: %v", name, got)
		}
	}
	t.Logf("false-positive corpus: %d documents, %d bytes, %d false positives", len(docs), bytes, findings)
	if len(docs) < 100 || bytes < 500_000 {
		t.Fatalf("corpus too small: %d documents, %d bytes", len(docs), bytes)
	}
}

func corpus(t testing.TB) map[string]string {
	docs := map[string]string{}
	root := ".."
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "testdata" && strings.Contains(p, "fuzz") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".md", ".sql", ".sh", ".txt", ".yaml", ".yml", ".json", "":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) > 1<<20 {
			return err
		}
		docs[p] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var hashes, uuids, b64 strings.Builder
	// Seeded: random bytes now and then spell a real token's shape (ghr_
	// and 36 letters), and the corpus must be the same in every run.
	rand := mathrand.NewChaCha8([32]byte{'m', 'e', 'm', 'f', 's'})
	for i := range 3000 {
		s1, s2, s5 := sha1.Sum([]byte{byte(i), byte(i >> 8)}), sha256.Sum256([]byte(fmt.Sprint(i))), sha512.Sum512([]byte(fmt.Sprint(i)))
		fmt.Fprintf(&hashes, "commit %s sha256:%s\nsha512 %s\n", hex.EncodeToString(s1[:]), hex.EncodeToString(s2[:]), hex.EncodeToString(s5[:]))
		u := make([]byte, 16)
		rand.Read(u)
		fmt.Fprintf(&uuids, "id %x-%x-%x-%x-%x\n", u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
		r := make([]byte, 12+i%90)
		rand.Read(r)
		fmt.Fprintf(&b64, "%s\n%s\n", base64.StdEncoding.EncodeToString(r), base64.RawURLEncoding.EncodeToString(r))
	}
	docs["hashes"], docs["uuids"], docs["base64"] = hashes.String(), uuids.String(), b64.String()
	docs["prose"] = prose
	return docs
}

const prose = `Passwords and keys

Never write a password into a note. Store the API key in the vault and keep
only its name here: the key for staging is "staging-api-key", the password for
the database is in the team's password manager. Rotate AWS access keys every
90 days; the access key id starts with four capital letters and the secret
key is forty characters long. A private key belongs in ~/.ssh, never in memory.
The token expired; ask for a new token. They keyed the monkey with a key-ring.
password = <your password here>
api_key: ${API_KEY}
aws_secret_access_key = {{ secrets.AWS_SECRET }}
DATABASE_URL=postgres://user@localhost:5432/app
https://example.com/path?key=value&token=TOKEN
Authorization: Bearer <token>
The JWT has three parts: header.payload.signature, each base64url-encoded.
-----BEGIN and -----END lines frame a PEM block; this sentence is not one.
aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
aws_access_key_id = AKIAIOSFODNN7EXAMPLE
DATABASE_URL=postgres://app:changeme123@localhost:5432/app
mysql://root:password123@127.0.0.1:3306/test
redis://default:yourpassword@cache:6379
SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX
`
