package main

// The web UI in a real browser: Debian's chromium, headless, driven with
// chromedp against the built binary's `memfs serve` on SQLite (and on
// PostgreSQL in TestPostgresUIBrowser), with a real mount writing beside
// it. The tests skip, saying so, only when no chromium is installed
// (.ci/run installs it). MEMFS_UI_SCREENSHOTS=DIR also saves the main
// pages there as PNG (docs/ holds the ones docs/ui.md shows).

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/memfs/memfs/guard/guardtest"
	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// chromium is the browser the tests drive, or a skip.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH: the web UI's browser tests need Debian's chromium package (apt-get install chromium; .ci/run installs it)")
	return ""
}

// browser is one headless chromium with a fresh profile; dialogs counts
// the JavaScript dialogs any page opened (each is dismissed).
type browser struct {
	ctx     context.Context
	dialogs *atomic.Int32
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelCtx(); cancelAlloc() })
	b := &browser{ctx: ctx, dialogs: &atomic.Int32{}}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			b.dialogs.Add(1)
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return b
}

// stepTimeout bounds one step: a page that never shows what a step waits
// for fails the test rather than hanging it.
const stepTimeout = 30 * time.Second

func (b *browser) run(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		loc, _ := chromedp.Run(b.ctx, chromedp.Location())
		body, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
		t.Fatalf("%s: %v (the browser is at %s, which reads:\n%s)", what, err, loc, body)
	}
}

// eval runs a script in the page and returns its value (promises awaited).
func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, func(p *runtime.EvaluateParams) { p.AwaitPromise = new(true) }))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func (b *browser) count(t *testing.T, selector string) int {
	t.Helper()
	return eval[int](t, b, fmt.Sprintf("document.querySelectorAll(%q).length", selector))
}

func (b *browser) text(t *testing.T, selector string) string {
	t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(selector)))
	if err != nil {
		t.Fatalf("read %s: %v", selector, err)
	}
	return s
}

func (b *browser) location(t *testing.T) string {
	t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		t.Fatalf("location: %v", err)
	}
	return s
}

// signIn signs in on the sign-in page with key and waits for the stores.
func (b *browser) signIn(t *testing.T, base, key string) {
	t.Helper()
	b.run(t, "sign in",
		chromedp.Navigate(base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), key),
		chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("#stores")))
}

// screenshot saves the page as DIR/ui-NAME.png when MEMFS_UI_SCREENSHOTS
// names a directory.
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("MEMFS_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	shot, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	// Small pictures for the docs: the page's height rather than the
	// window's, in at most 256 colours, compressed hard.
	bottom := eval[int](t, b, `Math.ceil(document.querySelector("main").getBoundingClientRect().bottom)`)
	bounds := img.Bounds()
	bounds.Max.Y = min(bounds.Max.Y, max(bottom, 200))
	var small bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&small, paletted(img, bounds)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ui-"+name+".png"), small.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// paletted is the part r of img in its 256 most frequent colours, each
// other colour drawn as the nearest of those: a page's few flat colours
// stay exact, and only the anti-aliased edges of its text move a little.
func paletted(img image.Image, r image.Rectangle) *image.Paletted {
	count := map[color.RGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			count[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	colours := make([]color.RGBA, 0, len(count))
	for c := range count {
		colours = append(colours, c)
	}
	sort.Slice(colours, func(i, j int) bool {
		if count[colours[i]] != count[colours[j]] {
			return count[colours[i]] > count[colours[j]]
		}
		return fmt.Sprint(colours[i]) < fmt.Sprint(colours[j])
	})
	pal := color.Palette{}
	for _, c := range colours[:min(256, len(colours))] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(image.Rect(0, 0, r.Dx(), r.Dy()), pal)
	nearest := map[color.RGBA]uint8{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			i, ok := nearest[c]
			if !ok {
				i = uint8(pal.Index(c))
				nearest[c] = i
			}
			out.SetColorIndex(x-r.Min.X, y-r.Min.Y, i)
		}
	}
	return out
}

func TestUIBrowser(t *testing.T) {
	chromium(t)
	runUIBrowser(t, newE2EEnv(t))
}

func TestPostgresUIBrowser(t *testing.T) {
	chromium(t)
	runUIBrowser(t, pgEnv(t, pgtest.Database(t)))
}

const (
	hostileContent = "<script>alert(1)</script>"
	hostileName    = `"><img src=x onerror=alert(2)>.md`
)

func runUIBrowser(t *testing.T, e *e2eEnv) {
	storeID, slug := e.createStore(t, "Team Notes")
	e.cli(t, "store", "update", storeID, "--description", "What the agents of the team remember")
	e.cli(t, "memory", "create", storeID, "--path", "/notes/todo.md", "--content", "buy milk\nwrite the report\ncall Ann\n")
	e.cli(t, "memory", "update", storeID, "/notes/todo.md", "--content", "buy milk\nwrite the quarterly report\ncall Ann\nbook the room\n")
	e.cli(t, "memory", "create", storeID, "--path", "/"+hostileName, "--content", hostileContent)
	e.cli(t, "memory", "create", storeID, "--path", "/notes/old.md", "--content", "to be deleted\n")
	e.cli(t, "checkpoint", "create", storeID, "--name", "before-cleanup")
	e.cli(t, "memory", "delete", storeID, "/notes/old.md")
	warned := strings.TrimSpace(e.cli(t, "store", "create", "--name", "Warned", "--guard", "warn"))
	cred := guardtest.One("github")
	e.cli(t, "memory", "create", warned, "--path", "/cfg.env", "--content", "# settings\n"+cred.Text)
	e.cli(t, "memory", "update", warned, "/cfg.env", "--content", "# settings\ntoken: in the vault\n")
	rw := e.apiKey(t)
	ro := strings.TrimSpace(e.cli(t, "apikey", "create", "--name", "viewer", "--read-only"))
	srv := e.startServe(t)
	base := srv.url
	b := newBrowser(t)

	t.Run("SignIn", func(t *testing.T) {
		b.run(t, "open /ui/", chromedp.Navigate(base+"/ui/"), chromedp.WaitVisible(chromedp.CSS("#key")))
		loc := b.location(t)
		if !strings.HasSuffix(loc, "/ui/signin") {
			t.Fatalf("without a sign-in /ui/ went to %s, want the sign-in page", loc)
		}
		b.screenshot(t, "signin")
		b.signIn(t, base, rw)
		loc = b.location(t)
		if strings.Contains(loc, "sk-memfs") {
			t.Fatalf("the key is in the URL %s", loc)
		}
		res, err := chromedp.Call(b.ctx, network.GetCookies, network.GetCookiesParams{})
		if err != nil {
			t.Fatal(err)
		}
		cookies := res.Cookies
		if len(cookies) != 1 || cookies[0].Name != "memfs_ui" || !cookies[0].HTTPOnly || cookies[0].SameSite != network.CookieSameSiteStrict || strings.Contains(cookies[0].Value, "sk-memfs") {
			t.Fatalf("cookies after sign-in: %+v, want one HttpOnly SameSite=Strict memfs_ui without the key", cookies)
		}
		if got := b.text(t, "#stores"); !strings.Contains(got, "Team Notes") || !strings.Contains(got, "What the agents of the team remember") {
			t.Fatalf("the stores page shows %q", got)
		}
		b.screenshot(t, "stores")
		if strings.Contains(srv.stderr.String(), rw) {
			t.Fatal("the server's log holds the key")
		}
	})

	// A second `memfs serve` on the same database, as behind a load
	// balancer: the browser's cookie (cookies do not tell ports apart)
	// is a sign-in there too, since sign-ins live in the database.
	t.Run("AnotherServer", func(t *testing.T) {
		other := e.startServe(t)
		b.run(t, "open the other server", chromedp.Navigate(other.url+"/ui/"), chromedp.WaitVisible(chromedp.CSS("#stores")))
		if loc := b.location(t); !strings.HasSuffix(loc, "/ui/") {
			t.Fatalf("the other server's /ui/ went to %s, want the stores page of the same sign-in", loc)
		}
		b.run(t, "back to the first server", chromedp.Navigate(base+"/ui/"), chromedp.WaitVisible(chromedp.CSS("#stores")))
	})

	t.Run("Tree", func(t *testing.T) {
		b.run(t, "open the store", chromedp.Click(chromedp.CSS("a.store")), chromedp.WaitVisible(chromedp.CSS("#tree")))
		got := b.text(t, "#tree")
		for _, want := range []string{"notes/", hostileName, "25 B"} {
			if !strings.Contains(got, want) {
				t.Fatalf("the tree shows %q, want %q in it", got, want)
			}
		}
		b.run(t, "open notes/", chromedp.Click(chromedp.Search(`//a[text()="notes/"]`)), chromedp.WaitVisible(chromedp.Search(`//a[text()="todo.md"]`)))
		got = b.text(t, "#tree")
		if !strings.Contains(got, "old.md") || !strings.Contains(got, "deleted") || !strings.Contains(got, "user") {
			t.Fatalf("notes/ shows %q, want todo.md with its writer and old.md as deleted", got)
		}
		b.screenshot(t, "tree")
	})

	t.Run("AsOfCheckpoint", func(t *testing.T) {
		b.run(t, "pick the checkpoint", chromedp.SetValue(chromedp.CSS("#asof-checkpoint"), "before-cleanup"),
			chromedp.Click(chromedp.CSS("#asof-go")), chromedp.WaitVisible(chromedp.CSS("#asof-banner")))
		if got := b.text(t, "#asof-banner"); !strings.Contains(got, "checkpoint before-cleanup") {
			t.Fatalf("the as-of banner reads %q", got)
		}
		got := b.text(t, "#tree")
		if !strings.Contains(got, "old.md") || strings.Contains(got, "deleted") {
			t.Fatalf("notes/ as of the checkpoint shows %q, want old.md as a live file", got)
		}
		b.screenshot(t, "tree-asof")
		b.run(t, "back to now", chromedp.Click(chromedp.Search(`//a[text()="now"]`)), chromedp.WaitVisible(chromedp.Search(`//a[text()="todo.md"]`)))
		if n := b.count(t, "#asof-banner"); n != 0 {
			t.Fatal("the tree of now still shows the as-of banner")
		}
	})

	t.Run("History", func(t *testing.T) {
		b.run(t, "open todo.md", chromedp.Click(chromedp.Search(`//a[text()="todo.md"]`)), chromedp.WaitVisible(chromedp.CSS("#history")))
		if n := b.count(t, "#history tr.version"); n != 2 {
			t.Fatalf("the history of /notes/todo.md shows %d versions, want 2", n)
		}
		if got := b.text(t, "#history tr.version"); !strings.Contains(got, "modified") || !strings.Contains(got, "head") {
			t.Fatalf("the newest row reads %q", got)
		}
		if n := b.count(t, "#history a.restore"); n != 1 {
			t.Fatalf("%d restore links, want 1 (the head is not restorable)", n)
		}
		b.screenshot(t, "history")
	})

	t.Run("Diff", func(t *testing.T) {
		b.run(t, "compare", chromedp.Click(chromedp.CSS("#compare")), chromedp.WaitVisible(chromedp.CSS("#diff")))
		ins := eval[[]string](t, b, `Array.from(document.querySelectorAll("#diff ins")).map(e => e.textContent)`)
		del := eval[[]string](t, b, `Array.from(document.querySelectorAll("#diff tr.del")).map(e => e.textContent)`)
		if strings.Join(ins, "|") != "quarterly |book the room" || len(del) != 1 || !strings.Contains(del[0], "write the report") {
			t.Fatalf("the diff marks %q as added words and %q as deleted lines", ins, del)
		}
		b.screenshot(t, "diff")
		b.run(t, "side by side", chromedp.Click(chromedp.CSS("#split")), chromedp.WaitVisible(chromedp.CSS("table.split")))
		if n := b.count(t, "table.split td.new ins"); n != 2 {
			t.Fatalf("the side-by-side diff marks %d runs of new words, want 2", n)
		}
		b.screenshot(t, "diff-split")
	})

	t.Run("Restore", func(t *testing.T) {
		b.run(t, "back to the history", chromedp.Navigate(base+"/ui/stores/"+storeID+"/history?path=/notes/todo.md"),
			chromedp.WaitVisible(chromedp.CSS("#history")),
			chromedp.Click(chromedp.CSS("#history a.restore")),
			chromedp.WaitVisible(chromedp.CSS("#confirm")))
		if got := b.text(t, "#what"); !strings.Contains(got, "new version of /notes/todo.md") {
			t.Fatalf("the confirmation says %q", got)
		}
		b.screenshot(t, "confirm")
		b.run(t, "confirm", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#history")))
		if n := b.count(t, "#history tr.version"); n != 3 {
			t.Fatalf("after the restore the history shows %d versions, want 3", n)
		}
		vs := e.versionList(t, storeID)
		head := vs[0]
		if head.CreatedBy == nil || head.CreatedBy.Type != "api_actor" || head.RestoredFrom == "" || *head.Path != "/notes/todo.md" {
			t.Fatalf("the newest version after the restore: %+v", head)
		}
		if got := b.text(t, "#history tr.version"); !strings.Contains(got, head.CreatedBy.ID) || !strings.Contains(got, "restored from") {
			t.Fatalf("the new version's row reads %q, want the key %s and its source", got, head.CreatedBy.ID)
		}
		if got := e.cli(t, "memory", "get", storeID, "/notes/todo.md"); got != "buy milk\nwrite the report\ncall Ann\n" {
			t.Fatalf("after the restore the memory holds %q", got)
		}
	})

	t.Run("Search", func(t *testing.T) {
		b.run(t, "search the current memories", chromedp.Navigate(base+"/ui/stores/"+storeID+"/"),
			chromedp.SendKeys(chromedp.CSS("#q"), "quarterly"), chromedp.Click(chromedp.CSS("#search")),
			chromedp.WaitVisible(chromedp.CSS("#noresults")))
		b.run(t, "search the history too", chromedp.Click(chromedp.CSS("#search-history")), chromedp.Click(chromedp.CSS("#search")),
			chromedp.WaitVisible(chromedp.CSS("#results")))
		if got := b.text(t, "#results"); !strings.Contains(got, "/notes/todo.md") || !strings.Contains(got, "write the quarterly report") {
			t.Fatalf("a history search for a word the restore removed finds %q", got)
		}
		b.screenshot(t, "search")
	})

	t.Run("GuardedSecretNotShown", func(t *testing.T) {
		noSecret := func(page string) {
			t.Helper()
			if body := eval[string](t, b, "document.documentElement.outerHTML"); strings.Contains(body, cred.Secret) {
				t.Fatalf("the %s page holds the secret the guard flagged", page)
			}
		}
		b.run(t, "open the history", chromedp.Navigate(base+"/ui/stores/"+warned+"/history?path=/cfg.env"),
			chromedp.WaitVisible(chromedp.CSS("#history")),
			chromedp.Click(chromedp.CSS("#history tr.op-created td a code")),
			chromedp.WaitVisible(chromedp.CSS(".flagged")))
		if got := b.text(t, ".flagged"); !strings.Contains(got, cred.Rule) || !strings.Contains(got, "line 2") {
			t.Fatalf("the flagged version's page says %q, want rule %s at line 2", got, cred.Rule)
		}
		noSecret("version")
		b.screenshot(t, "flagged")
		b.run(t, "diff it with the head", chromedp.Click(chromedp.CSS("a.diffhead")), chromedp.WaitVisible(chromedp.CSS(".flagged")))
		noSecret("diff")
		b.run(t, "search its history", chromedp.Navigate(base+"/ui/stores/"+warned+"/search?history=1&q=token"), chromedp.WaitVisible(chromedp.CSS("#results")))
		noSecret("search")
	})

	t.Run("ForgedPostWithoutToken", func(t *testing.T) {
		before := len(e.versionList(t, storeID))
		old := e.versionList(t, storeID)[2].ID
		status := eval[int](t, b, fmt.Sprintf(`fetch(%q, {method: "POST", body: new URLSearchParams({csrf: "forged"})}).then(r => r.status)`,
			"/ui/stores/"+storeID+"/versions/"+old+"/restore"))
		if status != 403 || len(e.versionList(t, storeID)) != before {
			t.Fatalf("a POST with a wrong form token got %d and left %d versions (was %d)", status, len(e.versionList(t, storeID)), before)
		}
	})

	t.Run("HostileContentRunsNoScript", func(t *testing.T) {
		b.run(t, "open the hostile file", chromedp.Navigate(base+"/ui/stores/"+storeID+"/"), chromedp.WaitVisible(chromedp.CSS("#tree")))
		if n := b.count(t, "main img"); n != 0 {
			t.Fatalf("the tree holds %d img elements: a path became markup", n)
		}
		b.run(t, "open its history", chromedp.Click(chromedp.Search(`//a[contains(text(), "onerror")]`)), chromedp.WaitVisible(chromedp.CSS("#history")))
		if got := b.text(t, "#path"); got != "/"+hostileName {
			t.Fatalf("the history's title holds %q", got)
		}
		b.run(t, "open its version", chromedp.Click(chromedp.CSS("#history tr.version td a code")), chromedp.WaitVisible(chromedp.CSS("#content")))
		text := eval[string](t, b, `document.getElementById("content").textContent`)
		if text != hostileContent {
			t.Fatalf("the content shows as %q", text)
		}
		if n := b.count(t, "main script, main img"); n != 0 {
			t.Fatalf("the version page holds %d script or img elements from the content or path", n)
		}
		time.Sleep(300 * time.Millisecond) // an onerror would have fired by now
		if n := b.dialogs.Load(); n != 0 {
			t.Fatalf("%d JavaScript dialogs opened", n)
		}
		b.screenshot(t, "hostile")
	})

	var sessionURL string
	t.Run("LiveSaveThroughMount", func(t *testing.T) {
		mnt := mountDir(t)
		e.startMount(t, mnt, "--store", "Team Notes")
		b.run(t, "open the history", chromedp.Navigate(base+"/ui/stores/"+storeID+"/history?path=/notes/todo.md"),
			chromedp.WaitVisible(chromedp.CSS("#history")))
		waitLive(t, b)
		before := b.count(t, "#history tr.version")
		start := time.Now()
		if err := os.WriteFile(filepath.Join(mnt, slug, "notes", "todo.md"), []byte("buy milk\ncall Ann\nsaved through the mount\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		saved := time.Since(start)
		for b.count(t, "#history tr.version") != before+1 {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("the save through the mount did not appear on the open history page within 10s")
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("a save through the mount (close() returned after %v) showed on the open history page %v after it began", saved, time.Since(start))
		if got := b.text(t, "#history tr.version"); !strings.Contains(got, "session") {
			t.Fatalf("the live row reads %q, want the mount's session as its actor", got)
		}
		b.screenshot(t, "history-live")
		b.run(t, "open the session", chromedp.Click(chromedp.CSS("#history tr.version a.actor")), chromedp.WaitVisible(chromedp.CSS("table.session-changes")))
		if got := b.text(t, "table.session-changes"); !strings.Contains(got, "/notes/todo.md") {
			t.Fatalf("the session's page lists %q", got)
		}
		b.screenshot(t, "session")
		sessionURL = b.location(t)
	})

	t.Run("UndoSession", func(t *testing.T) {
		if sessionURL == "" {
			t.Skip("needs the session of LiveSaveThroughMount")
		}
		// The mount ended with its subtest, and its session with it.
		b.run(t, "open the session", chromedp.Navigate(sessionURL), chromedp.Click(chromedp.CSS("#undo")), chromedp.WaitVisible(chromedp.CSS("table.undo-plan")))
		if got := b.text(t, "table.undo-plan"); !strings.Contains(got, "modify") || !strings.Contains(got, "/notes/todo.md") {
			t.Fatalf("the undo's plan reads %q", got)
		}
		b.screenshot(t, "undo")
		b.run(t, "confirm", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.Search(`//h1[contains(., "Undone")]`)))
		if got := e.cli(t, "memory", "get", storeID, "/notes/todo.md"); got != "buy milk\nwrite the report\ncall Ann\n" {
			t.Fatalf("after undoing the session the memory holds %q", got)
		}
		if head := e.versionList(t, storeID)[0]; head.CreatedBy == nil || head.CreatedBy.Type != "api_actor" {
			t.Fatalf("the undo's version: %+v", head)
		}
	})

	t.Run("SignOut", func(t *testing.T) {
		b.run(t, "sign out", chromedp.Click(chromedp.CSS("#signout")), chromedp.WaitVisible(chromedp.CSS("#key")),
			chromedp.Navigate(base+"/ui/stores/"+storeID+"/"), chromedp.WaitVisible(chromedp.CSS("#key")))
		loc := b.location(t)
		if !strings.HasSuffix(loc, "/ui/signin") {
			t.Fatalf("after signing out a store's page went to %s, want the sign-in page", loc)
		}
	})

	t.Run("ReadOnlyKey", func(t *testing.T) {
		b.signIn(t, base, ro)
		b.run(t, "open the history", chromedp.Navigate(base+"/ui/stores/"+storeID+"/history?path=/notes/todo.md"),
			chromedp.WaitVisible(chromedp.CSS("#history")))
		if n := b.count(t, "a.action, button.danger, #confirm"); n != 0 {
			t.Fatalf("a read-only key sees %d controls that change something", n)
		}
		buttons := eval[[]string](t, b, `Array.from(document.querySelectorAll("button")).map(e => e.id)`)
		if strings.Join(buttons, ",") != "signout,compare" {
			t.Fatalf("a read-only key sees the buttons %q, want only sign out and compare", buttons)
		}
		b.screenshot(t, "history-readonly")
		before := len(e.versionList(t, storeID))
		old := e.versionList(t, storeID)[2].ID
		// The forged POST carries the session's real form token: only
		// the key's scope stops it.
		status := eval[int](t, b, fmt.Sprintf(`fetch(%q, {method: "POST", body: new URLSearchParams({csrf: document.querySelector("input[name=csrf]").value})}).then(r => r.status)`,
			"/ui/stores/"+storeID+"/versions/"+old+"/restore"))
		if status != 403 || len(e.versionList(t, storeID)) != before {
			t.Fatalf("a read-only key's forged restore got %d and left %d versions (was %d)", status, len(e.versionList(t, storeID)), before)
		}
	})

	t.Run("RevokedKeyEndsSignIn", func(t *testing.T) {
		var keys versions.Page[versions.APIKey]
		e.cliJSON(t, &keys, "apikey", "list")
		for _, k := range keys.Data {
			if k.Name == "viewer" {
				e.cli(t, "apikey", "revoke", k.ID)
			}
		}
		b.run(t, "reload", chromedp.Navigate(base+"/ui/stores/"+storeID+"/"), chromedp.WaitVisible(chromedp.CSS("#key")))
	})
}

// waitLive waits until the page's change stream is open.
func waitLive(t *testing.T, b *browser) {
	t.Helper()
	for start := time.Now(); b.text(t, "#live-status") != "live"; time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the page's live status stayed %q", b.text(t, "#live-status"))
		}
	}
}
