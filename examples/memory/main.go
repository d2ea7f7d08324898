// Command memory runs Claude on the Messages API with a memfs store as its
// memory: the official Go SDK's tool runner answers every memory tool call
// (memory_20250818) from the store, so each change Claude makes is a version
// in the store's history, and agents mounting the same store see it.
//
//	export ANTHROPIC_API_KEY=…
//	go run ./examples/memory --store "Agent Memory" "Remember that Acme Corp prefers email follow-ups."
//	memfs log "Agent Memory"
//
// It needs an API key only to run; it builds without one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/user"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "memory:", err)
		os.Exit(1)
	}
}

func run() error {
	dbPath := flag.String("db", os.Getenv("MEMFS_DB"), "memfs database (default: memfs's default database)")
	storeRef := flag.String("store", "Agent Memory", "the store to use as memory (a memstore_ id or a name; created if no store has the name)")
	session := flag.String("session", "", "attribute the writes to this memfs session (which must have the store attached)")
	model := flag.String("model", string(anthropic.ModelClaudeOpus5), "model")
	flag.Parse()
	prompt := strings.Join(flag.Args(), " ")
	if prompt == "" {
		return errors.New(`give the task as arguments, e.g. "Help me respond to this customer service ticket."`)
	}
	if os.Getenv("ANTHROPIC_API_KEY") == "" {
		return errors.New("set ANTHROPIC_API_KEY to run Claude")
	}

	ctx := context.Background()
	if *dbPath == "" {
		var err error
		if *dbPath, err = versions.DefaultPath(); err != nil {
			return err
		}
	}
	db, err := versions.Open(*dbPath, versions.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := db.ResolveStore(ctx, *storeRef)
	if versions.ErrorCode(err) == versions.CodeNotFound && !strings.HasPrefix(*storeRef, "memstore_") {
		store, err = db.CreateStore(ctx, versions.StoreParams{Name: *storeRef, Description: "memory of examples/memory"})
	}
	if err != nil {
		return err
	}

	var tool *memtool.Tool
	if *session != "" {
		if tool, err = memtool.ForSession(ctx, db, store.ID, *session); err != nil {
			return err
		}
	} else {
		who := "example"
		if u, err := user.Current(); err == nil {
			who = u.Username
		}
		tool = memtool.New(db, store.ID, versions.UserActor(who))
	}

	client := anthropic.NewClient() // reads ANTHROPIC_API_KEY
	runner := client.Beta.Messages.NewToolRunner([]anthropic.BetaTool{tool}, anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model:     anthropic.Model(*model),
			MaxTokens: 2048,
			// The Anthropic-defined memory tool: the API adds its memory
			// protocol to the system prompt; the runner calls tool for it.
			Tools:    []anthropic.BetaToolUnionParam{memtool.Definition()},
			Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(prompt))},
		},
		MaxIterations: 20,
	})
	final, err := runner.RunToCompletion(ctx)
	if err != nil {
		return err
	}
	for _, block := range final.Content {
		if block.Type == "text" {
			fmt.Println(block.Text)
		}
	}
	fmt.Fprintf(os.Stderr, "memory: store %s; see what changed with: memfs log %s\n", store.ID, store.ID)
	return nil
}
