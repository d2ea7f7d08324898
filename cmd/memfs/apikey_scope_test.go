package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
)

// apikey create --store and --read-only make keys that memfs serve holds to
// their scope, and apikey list says each key's scope.
func TestAPIKeyScopeCLI(t *testing.T) {
	e := newE2EEnv(t)
	mine, _ := e.createStore(t, "Agent Notes")
	other, _ := e.createStore(t, "Private")
	scoped := strings.TrimSpace(e.cli(t, "apikey", "create", "--name", "agent", "--store", "Agent Notes"))
	readOnly := strings.TrimSpace(e.cli(t, "apikey", "create", "--name", "auditor", "--read-only"))
	if _, _, code := e.run(t, "apikey", "create", "--name", "x", "--store", "No Such Store"); code != 3 {
		t.Errorf("apikey create --store of an unknown store exited %d, want 3", code)
	}

	var keys struct {
		Data []struct {
			Name     string   `json:"name"`
			StoreIDs []string `json:"store_ids"`
			ReadOnly bool     `json:"read_only"`
		} `json:"data"`
	}
	e.cliJSON(t, &keys, "apikey", "list")
	if len(keys.Data) != 2 || keys.Data[0].Name != "agent" || len(keys.Data[0].StoreIDs) != 1 || keys.Data[0].StoreIDs[0] != mine || keys.Data[0].ReadOnly ||
		keys.Data[1].StoreIDs != nil || !keys.Data[1].ReadOnly {
		t.Fatalf("apikey list --format json = %+v", keys)
	}
	text := e.cli(t, "apikey", "list")
	if !strings.Contains(text, "SCOPE") || !strings.Contains(text, mine+", read-write") || !strings.Contains(text, "every store, read-only") {
		t.Errorf("apikey list does not show the scopes:\n%s", text)
	}

	srv := e.startServe(t)
	bg := context.Background()
	c := anthropic.NewClient(option.WithBaseURL(srv.url), option.WithAPIKey(scoped), option.WithMaxRetries(0))
	page, err := c.Beta.MemoryStores.List(bg, anthropic.BetaMemoryStoreListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != mine {
		t.Fatalf("the scoped key lists %+v, %v, want only %s", page, err, mine)
	}
	_, err = c.Beta.MemoryStores.Get(bg, other, anthropic.BetaMemoryStoreGetParams{})
	wantStatus(t, err, http.StatusNotFound, "not_found_error")
	ro := anthropic.NewClient(option.WithBaseURL(srv.url), option.WithAPIKey(readOnly), option.WithMaxRetries(0))
	_, err = ro.Beta.MemoryStores.Memories.New(bg, other, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/x.md", Content: param.NewOpt("x")})
	wantStatus(t, err, http.StatusForbidden, "permission_error")
}

func wantStatus(t *testing.T, err error, status int, typ string) {
	t.Helper()
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae.StatusCode != status || string(ae.Type()) != typ {
		t.Fatalf("got %v, want %d %s", err, status, typ)
	}
}
