package main

// The credential guard through the built binary, on every surface: the
// CLI, a mount, memfs serve with the official Go SDK as the client, and
// memfs tool. Every credential is made fresh by guardtest at run time.

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/memfs/memfs/guard/guardtest"
)

// wantGuardMessage checks what a surface says of a refusal: the rule, the
// way past it, and nothing of the secret.
func wantGuardMessage(t *testing.T, where, msg string, c guardtest.Credential) {
	t.Helper()
	if !strings.Contains(msg, "rule "+c.Rule) || !strings.Contains(msg, "--guard warn") {
		t.Errorf("%s: %q does not name rule %s and the way past it", where, msg, c.Rule)
	}
	noSecret(t, where, msg, c)
}

func noSecret(t *testing.T, where, text string, c guardtest.Credential) {
	t.Helper()
	if strings.Contains(text, c.Secret[:16]) || strings.Contains(text, c.Secret[len(c.Secret)-16:]) {
		t.Errorf("%s echoes the %s secret: %q", where, c.Kind, text)
	}
}

func TestGuardCLI(t *testing.T) {
	e := newE2EEnv(t)
	store, _ := e.createStore(t, "Guarded")
	if out := e.cli(t, "store", "get", store); !strings.Contains(out, "guard:") || !strings.Contains(out, "refuse") {
		t.Fatalf("store get does not show the guard:\n%s", out)
	}
	var obj map[string]any
	e.cliJSON(t, &obj, "store", "get", store)
	// store get adds the guard to the API's object, as a memfs field for
	// scripts (the HTTP API's object has none).
	if obj["guard"] != "refuse" {
		t.Errorf("store get --format json: guard %v, want refuse: %v", obj["guard"], obj)
	}
	id := strings.TrimSpace(e.cli(t, "memory", "create", store, "--path", "/notes.md", "--content", "# notes\n"))
	for _, c := range guardtest.All() {
		t.Run(c.Kind, func(t *testing.T) {
			out, errOut, code := e.run(t, "memory", "create", store, "--path", "/"+c.Kind+".md", "--content", c.Text)
			if code != exitInvalid {
				t.Fatalf("memory create with a %s credential: exit %d, want %d (stdout %q, stderr %q)", c.Kind, code, exitInvalid, out, errOut)
			}
			wantGuardMessage(t, "memory create", errOut, c)
			_, errOut, code = e.run(t, "memory", "update", store, id, "--content", "# notes\n"+c.Text)
			if code != exitInvalid {
				t.Fatalf("memory update: exit %d, want %d", code, exitInvalid)
			}
			wantGuardMessage(t, "memory update", errOut, c)
		})
	}
	if got := e.cli(t, "memory", "get", store, "/notes.md"); got != "# notes\n" {
		t.Fatalf("the memory holds %q after the refusals", got)
	}
	if vs := e.versionList(t, store); len(vs) != 1 {
		t.Fatalf("%d versions after the refusals, want 1", len(vs))
	}

	c := guardtest.One("github")
	e.cli(t, "store", "update", store, "--guard", "warn")
	_, errOut, code := e.run(t, "memory", "update", store, id, "--content", "# notes\n"+c.Text)
	if code != 0 || !strings.Contains(errOut, "rule=github-pat") || !strings.Contains(errOut, "line=2") || !strings.Contains(errOut, "path=/notes.md") {
		t.Fatalf("warn: exit %d, want 0 and a warning naming rule, path and line; stderr %q", code, errOut)
	}
	noSecret(t, "the warning", errOut, c)
	e.cli(t, "store", "update", store, "--guard", "off")
	if out := e.cli(t, "store", "get", store); !strings.Contains(out, "off") {
		t.Fatalf("store get after --guard off:\n%s", out)
	}
	d := guardtest.One("jwt")
	_, errOut, code = e.run(t, "memory", "create", store, "--path", "/off.md", "--content", d.Text)
	if code != 0 || strings.Contains(errOut, "credential") {
		t.Fatalf("off: exit %d, stderr %q; want 0 and no word of it", code, errOut)
	}
	if _, errOut, code := e.run(t, "store", "update", store, "--guard", "loud"); code != exitUsage {
		t.Fatalf("--guard loud: exit %d (%s), want %d", code, errOut, exitUsage)
	}
}

func TestGuardMount(t *testing.T) {
	e := newE2EEnv(t)
	store, slug := e.createStore(t, "Guarded Mount")
	e.cli(t, "memory", "create", store, "--path", "/notes.md", "--content", "# notes\n")
	mnt := mountDir(t)
	d := e.startMount(t, mnt, "--store", store)
	dir := filepath.Join(mnt, slug)
	save := func(name, content string) error {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		_, werr := f.WriteString(content)
		if err := f.Close(); err != nil {
			return err
		}
		return werr
	}
	for _, kind := range []string{"aws", "anthropic", "openssh", "database-url"} {
		c := guardtest.One(kind)
		t.Run(kind, func(t *testing.T) {
			if err := save("notes.md", "# notes\n"+c.Text); !errors.Is(err, syscall.EACCES) {
				t.Fatalf("saving a %s credential over notes.md: %v, want EACCES", kind, err)
			}
			if err := save("new-"+kind+".md", c.Text); !errors.Is(err, syscall.EACCES) {
				t.Fatalf("saving a %s credential as a new file: %v, want EACCES", kind, err)
			}
			// sed -i: a temporary file renamed onto the target.
			line := filepath.Join(t.TempDir(), "line")
			if err := os.WriteFile(line, []byte(c.Text), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := shErr(dir, "sed -i '1r "+line+"' notes.md"); err == nil {
				t.Errorf("sed -i adding a %s credential succeeded: %s", kind, out)
			}
			got, err := os.ReadFile(filepath.Join(dir, "notes.md"))
			if err != nil || string(got) != "# notes\n" {
				t.Fatalf("notes.md after the refusals: %q, %v", got, err)
			}
			// The daemon logs a refusal before it answers; its stderr
			// reaches this process through a pipe, a little later.
			names := func(log string) bool {
				return strings.Contains(log, "rule "+c.Rule) && strings.Contains(log, store) && strings.Contains(log, "/notes.md") && strings.Contains(log, "errno=EACCES")
			}
			waitFor(func() bool { return names(d.stderr.String()) }, time.Now(), 5*time.Second)
			log := d.stderr.String()
			if !names(log) {
				t.Errorf("the daemon's log does not name store, path, rule and errno:\n%s", log)
			}
			noSecret(t, "the daemon's log", log, c)
		})
	}
	e.settle(t)
	// The lines of the last refusals may have reached the log after a
	// kind's check: the whole log holds no secret either.
	for _, kind := range []string{"aws", "anthropic", "openssh", "database-url"} {
		noSecret(t, "the daemon's log", d.stderr.String(), guardtest.One(kind))
	}
	if got := e.cli(t, "memory", "get", store, "/notes.md"); got != "# notes\n" {
		t.Fatalf("the head holds %q", got)
	}
	if vs := e.versionList(t, store); len(vs) != 1 {
		t.Fatalf("%d versions, want 1: %s", len(vs), describeVersions(vs))
	}
}

func TestGuardHTTP(t *testing.T) {
	e := newE2EEnv(t)
	key := e.apiKey(t)
	srv := e.startServe(t)
	c := anthropic.NewClient(option.WithBaseURL(srv.url), option.WithAPIKey(key))
	ms := c.Beta.MemoryStores
	st, err := ms.New(bg, anthropic.BetaMemoryStoreNewParams{Name: "Guarded API"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ms.Memories.New(bg, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/notes.md", Content: param.NewOpt("# notes\n")})
	if err != nil {
		t.Fatal(err)
	}
	for _, cred := range guardtest.All() {
		t.Run(cred.Kind, func(t *testing.T) {
			_, err := ms.Memories.New(bg, st.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/" + cred.Kind + ".md", Content: param.NewOpt(cred.Text)})
			wantStatus(t, err, 400, "invalid_request_error")
			var ae *anthropic.Error
			errors.As(err, &ae)
			wantGuardMessage(t, "POST memories", ae.Message, cred)
			noSecret(t, "the response", ae.RawJSON(), cred)
			_, err = ms.Memories.Update(bg, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: st.ID, Content: param.NewOpt("# notes\n" + cred.Text)})
			wantStatus(t, err, 400, "invalid_request_error")
		})
	}
	got, err := ms.Memories.Get(bg, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: st.ID})
	if err != nil || got.Content != "# notes\n" || got.MemoryVersionID != m.MemoryVersionID {
		t.Fatalf("after the refusals: %+v, %v", got, err)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(st.RawJSON()), &obj); err != nil || obj["guard"] != nil {
		t.Fatalf("the store object: %s", st.RawJSON())
	}
}

func TestGuardTool(t *testing.T) {
	e := newE2EEnv(t)
	store, _ := e.createStore(t, "Guarded Tool")
	c := guardtest.One("slack")
	text, _ := json.Marshal(c.Text)
	res := e.tool(t, []string{
		`{"command":"create","path":"/memories/plan.md","file_text":"# Plan\n"}`,
		`{"command":"create","path":"/memories/creds.md","file_text":` + string(text) + `}`,
		`{"command":"str_replace","path":"/memories/plan.md","old_str":"# Plan\n","new_str":` + string(text) + `}`,
		`{"command":"insert","path":"/memories/plan.md","insert_line":1,"insert_text":` + string(text) + `}`,
		`{"command":"view","path":"/memories/plan.md"}`,
	}, store)
	for _, r := range res[1:4] {
		if !r.IsError || !strings.HasPrefix(r.Content, "Error: ") {
			t.Errorf("tool result %+v, want an error", r)
		}
		wantGuardMessage(t, "the tool's result", r.Content, c)
	}
	if !strings.Contains(res[4].Content, "# Plan") || res[4].IsError {
		t.Fatalf("plan.md after the refusals: %+v", res[4])
	}
}

func TestGuardScan(t *testing.T) {
	e := newE2EEnv(t)
	store, _ := e.createStore(t, "Scanned")
	e.cli(t, "store", "update", store, "--guard", "off")
	c := guardtest.One("anthropic")
	id := strings.TrimSpace(e.cli(t, "memory", "create", store, "--path", "/a.md", "--content", "intro\n"+c.Text))
	e.cli(t, "memory", "update", store, id, "--content", "intro\nthe key is in the vault\n")
	h := guardtest.One("pem")
	e.cli(t, "memory", "create", store, "--path", "/key.md", "--content", h.Text)
	vs := e.versionList(t, store) // newest first
	old, head := vs[2].ID, vs[0].ID

	out, errOut, code := e.run(t, "scan", store)
	if code != exitFound {
		t.Fatalf("scan: exit %d, want %d; stderr %s", code, exitFound, errOut)
	}
	want := old + "\t/a.md\tanthropic-api-key\tline 2\n" + head + "\t/key.md\tprivate-key\tline 1\thead\n"
	if out != want {
		t.Fatalf("scan printed\n%s\nwant\n%s", out, want)
	}
	noSecret(t, "scan", out+errOut, c)
	noSecret(t, "scan", out+errOut, h)
	var page struct {
		Data []struct {
			VersionID string `json:"version_id"`
			Rule      string `json:"rule"`
			Line      int    `json:"line"`
			Head      bool   `json:"head"`
		} `json:"data"`
	}
	if out, _, _ := e.run(t, "--format", "json", "scan", store); json.Unmarshal([]byte(out), &page) != nil || len(page.Data) != 2 || page.Data[0].VersionID != old || !page.Data[1].Head {
		t.Fatalf("scan --format json: %s", out)
	}
	if _, errOut, code := e.run(t, "scan", store, "--redact"); code != exitUsage || !strings.Contains(errOut, "--yes") {
		t.Fatalf("scan --redact without a terminal or --yes: exit %d, %s", code, errOut)
	}
	_, errOut, code = e.run(t, "scan", store, "--redact", "--yes")
	if code != exitFound || !strings.Contains(errOut, "redacted 1 version\n") || !strings.Contains(errOut, head+" is the current version of /key.md") {
		t.Fatalf("scan --redact --yes: exit %d, stderr %s", code, errOut)
	}
	if v := e.cli(t, "--format", "json", "version", "get", store, old); !strings.Contains(v, `"redacted_at":"`) {
		t.Fatalf("version %s not redacted: %s", old, v)
	}
	e.cli(t, "memory", "delete", store, "/key.md")
	e.cli(t, "scan", store, "--redact", "--yes")
	if out, errOut, code := e.run(t, "scan", store); code != 0 || out != "" {
		t.Fatalf("scan after redaction: exit %d, %q %q", code, out, errOut)
	}
}

func TestGuardImportReports(t *testing.T) {
	e := newE2EEnv(t)
	store, _ := e.createStore(t, "Exported")
	e.cli(t, "store", "update", store, "--guard", "off")
	c := guardtest.One("stripe")
	e.cli(t, "memory", "create", store, "--path", "/a.md", "--content", c.Text)
	export := e.cli(t, "export", store)
	f := filepath.Join(t.TempDir(), "export.jsonl")
	if err := os.WriteFile(f, []byte(export), 0o600); err != nil {
		t.Fatal(err)
	}
	other := newE2EEnv(t)
	_, errOut, code := other.run(t, "import", f)
	if code != 0 || !strings.Contains(errOut, "holds 1 credential (stripe-access-token)") {
		t.Fatalf("import: exit %d, stderr %s", code, errOut)
	}
	noSecret(t, "import", errOut, c)
	if got := other.cli(t, "memory", "get", store, "/a.md"); got != c.Text {
		t.Fatalf("import changed the content: %q", got)
	}
}

// TestGuardMetrics: a mount's metrics count credentials by rule and action.
func TestGuardMetrics(t *testing.T) {
	e := newE2EEnv(t)
	refusing, slug := e.createStore(t, "Metered Guard")
	warning, wslug := e.createStore(t, "Metered Warn")
	e.cli(t, "store", "update", warning, "--guard", "warn")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	mnt := mountDir(t)
	d := e.startMount(t, mnt, "--store", refusing, "--store", warning, "--metrics-addr", addr)
	c := guardtest.One("gitlab")
	if err := os.WriteFile(filepath.Join(mnt, slug, "a.md"), []byte(c.Text), 0o644); !errors.Is(err, syscall.EACCES) {
		t.Fatalf("refusing store: %v, want EACCES", err)
	}
	if err := os.WriteFile(filepath.Join(mnt, wslug, "a.md"), []byte(c.Text), 0o644); err != nil {
		t.Fatalf("warning store: %v", err)
	}
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	// A refused save is tried again when its last handle is released:
	// refusals count each try.
	for _, want := range []string{`memfs_guard_credentials_total{action="refused",rule="gitlab-pat"} `,
		`memfs_guard_credentials_total{action="warned",rule="gitlab-pat"} 1`, `memfs_mount_refusals_total{errno="EACCES"} `} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(string(b), "memfs_"))
		}
	}
	if log := d.stderr.String(); !strings.Contains(log, "credential saved: the store's guard warns") || !strings.Contains(log, "rule=gitlab-pat") {
		t.Errorf("the daemon did not log the warning:\n%s", log)
	}
	noSecret(t, "the daemon's log", d.stderr.String(), c)
}
