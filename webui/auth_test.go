package webui_test

// The sign-in's rules over real HTTP on a real SQLite file: what a browser
// cannot be made to do from the tests in cmd/memfs (another host's
// address, a burst of attempts, an idle session).

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/webui"
)

func newUI(t *testing.T, o webui.Options) (*versions.DB, *httptest.Server) {
	t.Helper()
	db, err := versions.Open(filepath.Join(t.TempDir(), "memfs.db"), versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := httptest.NewServer(webui.New(db, o))
	t.Cleanup(srv.Close)
	return db, srv
}

func client(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func signIn(t *testing.T, c *http.Client, base, key string) *http.Response {
	t.Helper()
	res, err := c.PostForm(base+"/ui/signin", url.Values{"key": {key}})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestSignIn(t *testing.T) {
	ctx := context.Background()
	db, srv := newUI(t, webui.Options{IdleTimeout: 300 * time.Millisecond})
	_, key, err := db.CreateAPIKey(ctx, "browser")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("HeadersOnEveryPage", func(t *testing.T) {
		res, _ := get(t, client(t), srv.URL+"/ui/signin")
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") {
			t.Errorf("Content-Security-Policy %q allows inline code", csp)
		}
		if got := res.Header.Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("X-Frame-Options = %q", got)
		}
	})

	t.Run("CookieAndRedirect", func(t *testing.T) {
		c := client(t)
		res := signIn(t, c, srv.URL, key)
		if res.StatusCode != http.StatusSeeOther || strings.Contains(res.Header.Get("Location"), "sk-memfs") {
			t.Fatalf("sign-in answered %d to %q", res.StatusCode, res.Header.Get("Location"))
		}
		set := res.Header.Get("Set-Cookie")
		for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/ui/"} {
			if !strings.Contains(set, want) {
				t.Errorf("Set-Cookie %q lacks %s", set, want)
			}
		}
		if strings.Contains(set, key) {
			t.Error("the cookie holds the key")
		}
		if res, _ := get(t, c, srv.URL+"/ui/"); res.StatusCode != http.StatusOK {
			t.Fatalf("a signed-in browser's /ui/ answered %d", res.StatusCode)
		}
	})

	t.Run("IdleSessionEnds", func(t *testing.T) {
		c := client(t)
		signIn(t, c, srv.URL, key)
		time.Sleep(500 * time.Millisecond)
		res, _ := get(t, c, srv.URL+"/ui/")
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/signin" {
			t.Fatalf("after the idle timeout /ui/ answered %d to %q, want the sign-in page", res.StatusCode, res.Header.Get("Location"))
		}
	})

	t.Run("WrongKey", func(t *testing.T) {
		if res := signIn(t, client(t), srv.URL, "sk-memfs-not-a-key"); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a wrong key got %d", res.StatusCode)
		}
	})

	t.Run("PlainHTTPFromAnotherHost", func(t *testing.T) {
		ui := webui.New(db, webui.Options{})
		req := httptest.NewRequest(http.MethodPost, "/ui/signin", strings.NewReader(url.Values{"key": {key}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.RemoteAddr = "192.0.2.7:40000"
		rec := httptest.NewRecorder()
		ui.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden || rec.Header().Get("Set-Cookie") != "" {
			t.Fatalf("a sign-in over plain HTTP from another host got %d, cookie %q", rec.Code, rec.Header().Get("Set-Cookie"))
		}
	})

	t.Run("RateLimited", func(t *testing.T) {
		_, srv := newUI(t, webui.Options{})
		c := client(t)
		var last int
		for range 11 {
			last = signIn(t, c, srv.URL, "sk-memfs-wrong").StatusCode
		}
		if last != http.StatusTooManyRequests {
			t.Fatalf("the 11th sign-in in a row got %d, want 429", last)
		}
		if res := signIn(t, c, srv.URL, key); res.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("a right key during the limit got %d, want 429", res.StatusCode)
		}
	})

	t.Run("CrossSitePost", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/ui/signin", strings.NewReader(url.Values{"key": {key}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		res, err := client(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("a sign-in posted from another site got %d", res.StatusCode)
		}
	})
}

// Sign-ins live in the database: a browser signed in on one server is
// signed in on every server of the same database (several `memfs serve`
// behind one address, or one restarted), signing out on one ends it on
// all, and so does revoking the key.
func TestSignInSharedByServers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memfs.db")
	open := func() *versions.DB {
		db, err := versions.Open(path, versions.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	dbA, dbB := open(), open()
	a := httptest.NewServer(webui.New(dbA, webui.Options{}))
	t.Cleanup(a.Close)
	b := httptest.NewServer(webui.New(dbB, webui.Options{}))
	t.Cleanup(b.Close)
	k, key, err := dbA.CreateAPIKey(context.Background(), "fleet")
	if err != nil {
		t.Fatal(err)
	}
	// Both servers are on 127.0.0.1: the browser's cookie goes to both,
	// as it would to two servers behind one address.
	c := client(t)
	if res := signIn(t, c, a.URL, key); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in on the first server answered %d", res.StatusCode)
	}
	res, page := get(t, c, b.URL+"/ui/")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, k.ID) {
		t.Fatalf("the second server answered %d to a browser signed in on the first, want its stores page", res.StatusCode)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatal("the second server's page has no form token")
	}
	// The cookie as it was before the sign-out: a browser that kept it
	// is signed out on the first server too.
	ua, _ := url.Parse(a.URL + "/ui/")
	kept := client(t)
	kept.Jar.SetCookies(ua, c.Jar.Cookies(ua))
	out, err := c.PostForm(b.URL+"/ui/signout", url.Values{"csrf": {csrf[1]}})
	if err != nil {
		t.Fatal(err)
	}
	out.Body.Close()
	if out.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out on the second server answered %d", out.StatusCode)
	}
	if res, _ := get(t, kept, a.URL+"/ui/"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/signin" {
		t.Fatalf("after signing out on the second server the first answered %d to %q, want the sign-in page", res.StatusCode, res.Header.Get("Location"))
	}
	signIn(t, c, a.URL, key)
	if res, _ := get(t, c, a.URL+"/ui/"); res.StatusCode != http.StatusOK {
		t.Fatalf("after signing in again the first server answered %d", res.StatusCode)
	}
	if _, err := dbB.RevokeAPIKey(context.Background(), k.ID); err != nil {
		t.Fatal(err)
	}
	for _, srv := range []string{a.URL, b.URL} {
		if res, _ := get(t, c, srv+"/ui/"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/signin" {
			t.Fatalf("after the key was revoked %s answered %d to %q, want the sign-in page", srv, res.StatusCode, res.Header.Get("Location"))
		}
	}
}
