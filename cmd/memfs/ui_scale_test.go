package main

// The web UI's figures, measured rather than asserted: a file's history of
// 2,000 versions (first page at the server and in the browser), a folder of
// 2,000 memories, and a save through a mount until the open history page
// shows it. It runs only when MEMFS_UI_BENCH is set (scripts/ui-bench).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

func TestUIScale(t *testing.T) {
	if os.Getenv("MEMFS_UI_BENCH") == "" {
		t.Skip("a measurement: set MEMFS_UI_BENCH=1 (scripts/ui-bench does)")
	}
	chromium(t)
	t.Run("SQLite", func(t *testing.T) { measureUI(t, newE2EEnv(t)) })
	t.Run("PostgreSQL", func(t *testing.T) {
		if os.Getenv("MEMFS_TEST_POSTGRES") == "" {
			t.Skip("MEMFS_TEST_POSTGRES names no server")
		}
		measureUI(t, pgEnv(t, pgtest.Database(t)))
	})
}

// spread is a few timings as min / median / max.
func spread(d []time.Duration) string {
	slices.Sort(d)
	r := func(x time.Duration) string { return x.Round(100 * time.Microsecond).String() }
	return fmt.Sprintf("min %s, median %s, max %s (n=%d)", r(d[0]), r(d[len(d)/2]), r(d[len(d)-1]), len(d))
}

func measureUI(t *testing.T, e *e2eEnv) {
	ctx := context.Background()
	db, err := versions.Open(e.dbPath, versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	by := versions.UserActor("bench")
	hist, err := db.CreateStore(ctx, versions.StoreParams{Name: "History"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := db.CreateMemory(ctx, hist.ID, "/log.md", "version 0\n", by)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 2000; i++ {
		c := fmt.Sprintf("version %d\nline two\n", i)
		if _, err := db.UpdateMemory(ctx, hist.ID, m.ID, versions.MemoryUpdate{Content: &c}, by); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := db.CreateStore(ctx, versions.StoreParams{Name: "Tree"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		if _, err := db.CreateMemory(ctx, tree.ID, fmt.Sprintf("/many/note-%04d.md", i), "a note\n", by); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	key := e.apiKey(t)
	srv := e.startServe(t)
	historyURL := srv.url + "/ui/stores/" + hist.ID + "/history?path=/log.md"
	treeURL := srv.url + "/ui/stores/" + tree.ID + "/?dir=/many"

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	if res, err := c.PostForm(srv.url+"/ui/signin", url.Values{"key": {key}}); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("sign in: %v %v", res, err)
	}
	atServer := func(u string) []time.Duration {
		var d []time.Duration
		for range 7 {
			start := time.Now()
			res, err := c.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d", u, res.StatusCode)
			}
			d = append(d, time.Since(start))
		}
		return d
	}
	t.Logf("history of 2,000 versions, first page, whole response at the server: %s", spread(atServer(historyURL)))
	t.Logf("folder of 2,000 memories, whole response at the server: %s", spread(atServer(treeURL)))

	b := newBrowser(t)
	b.signIn(t, srv.url, key)
	inBrowser := func(what, u, sel string) {
		var d, resp, dom, load []time.Duration
		var bytes int
		for range 5 {
			start := time.Now()
			b.run(t, "open "+u, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(sel)))
			d = append(d, time.Since(start))
			// The browser's own timing of the navigation: the response
			// complete, the document parsed, and laid out and loaded.
			nav := eval[[]float64](t, b, `(() => { const n = performance.getEntriesByType("navigation")[0];
				return [n.responseEnd - n.startTime, n.domContentLoadedEventEnd - n.startTime, n.loadEventEnd - n.startTime, n.transferSize]; })()`)
			ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
			resp, dom, load = append(resp, ms(nav[0])), append(dom, ms(nav[1])), append(load, ms(nav[2]))
			bytes = int(nav[3])
		}
		t.Logf("%s, navigation until the table is visible in chromium: %s", what, spread(d))
		t.Logf("  of which the response: %s; parsed (DOMContentLoaded): %s; loaded: %s; %d bytes", spread(resp), spread(dom), spread(load), bytes)
	}
	inBrowser("history of 2,000 versions, first page", historyURL, "#history")
	inBrowser("folder of 2,000 memories", treeURL, "#tree")

	mnt := mountDir(t)
	e.startMount(t, mnt, "--store", "History")
	b.run(t, "open the history", chromedp.Navigate(historyURL), chromedp.WaitVisible(chromedp.CSS("#history")))
	waitLive(t, b)
	var live []time.Duration
	for i := range 20 {
		before := eval[string](t, b, `document.querySelector("#history tr.version").dataset.version`)
		start := time.Now()
		if err := os.WriteFile(filepath.Join(mnt, "history", "log.md"), []byte(fmt.Sprintf("live save %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		for eval[string](t, b, `document.querySelector("#history tr.version").dataset.version`) == before {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("save %d did not show within 10s", i)
			}
			time.Sleep(10 * time.Millisecond)
		}
		live = append(live, time.Since(start))
	}
	t.Logf("a save through a mount until the open history page shows it: %s", spread(live))
}
