package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
	"golang.org/x/text/width"

	"github.com/memfs/memfs/versions"
)

// withDB opens the database for one command and closes it afterwards.
func withDB(c *cli.Context, fn func(ctx context.Context, db *versions.DB) error) error {
	db, err := openDB(c)
	if err != nil {
		return err
	}
	err = fn(ctx(c), db)
	if cerr := db.Close(); err == nil && cerr != nil {
		return fmt.Errorf("close database: %w", cerr)
	}
	return err
}

// wantArgs checks the number of positional arguments, named for the message.
func wantArgs(c *cli.Context, min int, names ...string) error {
	n := c.Args().Len()
	if n >= min && n <= len(names) {
		return nil
	}
	want := strings.Join(names[:min], " and ")
	switch {
	case n < min:
		return usageFor(c, "needs %s", want)
	default:
		return usageFor(c, "unexpected argument %q", c.Args().Get(len(names)))
	}
}

// resolveStore finds the store named by a positional argument.
func resolveStore(ctx context.Context, db *versions.DB, ref string) (*versions.Store, error) {
	return db.ResolveStore(ctx, ref)
}

// table writes aligned columns; the caller writes the header first and
// flushes at the end.
func table(w io.Writer) *tableWriter {
	t := &tableWriter{out: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 4, 2, ' ', 0)
	return t
}

// tableWriter drops the padding tabwriter leaves at the end of lines whose
// last columns are empty, and aligns cells by the columns a terminal gives
// them: tabwriter counts a character as one column, but an East Asian wide
// character (日本語, 한국어) takes two and a combining mark none. Each cell
// is followed by as many NUL bytes as its width differs from its count of
// characters, which tabwriter counts as one column each; Flush removes
// them, so the padding after the cell makes up for its width.
type tableWriter struct {
	tw  *tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

func (t *tableWriter) Write(p []byte) (int, error) {
	var b []byte
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '\t' && p[i] != '\n' {
			continue
		}
		cell := p[start:i]
		b = append(b, cell...)
		if extra := displayWidth(string(cell)) - utf8.RuneCount(cell); extra > 0 {
			b = append(b, bytes.Repeat([]byte{0}, extra)...)
		}
		if i < len(p) {
			b = append(b, p[i])
		}
		start = i + 1
	}
	if _, err := t.tw.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// displayWidth is how many columns a terminal gives s: two for an East
// Asian wide or fullwidth character, none for a combining mark or a
// zero-width one, one for any other. Less than its count of characters
// (combining marks) is left to tabwriter's count: padding can only be
// added.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == '\u200b' || r == 0:
		case width.LookupRune(r).Kind() == width.EastAsianWide || width.LookupRune(r).Kind() == width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}

func (t *tableWriter) Flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(t.buf.String(), "\n") {
		nl := strings.HasSuffix(line, "\n")
		b.WriteString(strings.TrimRight(strings.ReplaceAll(line, "\x00", ""), " \n"))
		if nl {
			b.WriteByte('\n')
		}
	}
	t.buf.Reset()
	_, err := io.WriteString(t.out, b.String())
	return err
}

func row(w io.Writer, cols ...string) { fmt.Fprintln(w, strings.Join(cols, "\t")) }

// nextPageHint tells a person on stderr how to see the rest of a listing.
func nextPageHint(c *cli.Context, next *string) {
	if next != nil && *next != "" && !asJSON(c) {
		fmt.Fprintf(c.App.ErrWriter, "more: repeat with --page %s\n", *next)
	}
}

// confirm tells a person on stderr what a command did; scripts read the exit
// code, or the object with --format json.
func confirm(c *cli.Context, format string, args ...any) {
	fmt.Fprintf(c.App.ErrWriter, format+"\n", args...)
}

// when shows a time for people: local, to the second.
func when(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }

func whenPtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return when(*t)
}

// ago is how long before now t was, coarsely: "3m ago".
func ago(t time.Time, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// actor shows who wrote a version: "session sesn_…", "user root".
func actor(a *versions.Actor) string {
	if a == nil {
		return "-"
	}
	kind := strings.TrimSuffix(a.Type, "_actor")
	if kind == "service_account" {
		kind = "service"
	}
	return kind + " " + a.ID
}

func shortSHA(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	if len(*s) > 12 {
		return (*s)[:12]
	}
	return *s
}

func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func size(n *int) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}

// notes marks versions a person should notice in a listing.
func notes(v versions.Version) string { return logNotes(v, nil) }

// readContent returns the content given by --content or --file (a path or
// "-" for stdin); ok is false when neither was given.
func readContent(c *cli.Context) (content string, ok bool, err error) {
	hasContent, hasFile := c.IsSet("content"), c.IsSet("file")
	switch {
	case hasContent && hasFile:
		return "", false, usageFor(c, "give --content or --file, not both")
	case hasContent:
		return c.String("content"), true, nil
	case !hasFile:
		return "", false, nil
	}
	name := c.String("file")
	var b []byte
	if name == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return "", false, &versions.Error{Code: versions.CodeInvalid, Message: fmt.Sprintf("read --file %s: %v; give a readable file, or - for stdin", name, err)}
	}
	return string(b), true, nil
}

// parseView checks a --view value.
func parseView(c *cli.Context) (versions.View, error) {
	switch v := c.String("view"); v {
	case "", "basic":
		return versions.ViewBasic, nil
	case "full":
		return versions.ViewFull, nil
	default:
		return "", usageFor(c, "--view must be basic or full, not %q", v)
	}
}

// basic drops a memory's content unless --view full was asked for: the API
// returns the basic view from create and update.
func basic(m *versions.Memory, view versions.View) *versions.Memory {
	if view == versions.ViewFull {
		return m
	}
	cp := *m
	cp.Content = nil
	return &cp
}

// Flags are made anew for each command: urfave/cli keeps parse state in them.
func viewFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "view", Usage: usage, Value: "basic"}
}

func pageFlags(withView bool) []cli.Flag {
	usage := fmt.Sprintf("at most `N` items per page, 1 to %d (default %d)", versions.MaxPageSize, versions.DefaultPageSize)
	if withView {
		usage = fmt.Sprintf("at most `N` items per page: 1 to %d (default %d), or to %d with --view full", versions.MaxPageSize, versions.DefaultPageSize, versions.MaxFullViewPage)
	}
	return []cli.Flag{
		&cli.IntFlag{Name: "limit", Usage: usage},
		&cli.StringFlag{Name: "page", Usage: "the `CURSOR` a previous listing printed as next_page"},
	}
}

// pageLimit reads --limit and refuses what the engine would otherwise cap
// without a word: a page holds at most 1,000 items, 20 with --view full.
func pageLimit(c *cli.Context, view versions.View) (int, error) {
	n := c.Int("limit")
	max := versions.MaxPageSize
	if view == versions.ViewFull {
		max = versions.MaxFullViewPage
	}
	switch {
	case n < 0:
		return 0, usageFor(c, "--limit %d is negative: give a page size from 1 to %d", n, max)
	case n > max && view == versions.ViewFull:
		return 0, invalidf("--limit %d is over the %d items a page holds with --view full: give at most %d, or --view basic, and follow next_page", n, max, max)
	case n > max:
		return 0, invalidf("--limit %d is over the %d items a page holds: give at most %d and follow next_page (--page)", n, max, max)
	}
	return n, nil
}

// createdFlags are the API's created_at[gte] and created_at[lte] filters.
func createdFlags(what string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "created-after", Usage: "only " + what + " created at or after `WHEN` (an age such as 2h or 3d, a date such as 2026-11-30, an RFC 3339 time)"},
		&cli.StringFlag{Name: "created-before", Usage: "only " + what + " created at or before `WHEN`"},
	}
}

func createdSpan(c *cli.Context) (gte, lte time.Time, err error) {
	now := time.Now()
	if gte, err = parseWhen("--created-after", c.String("created-after"), now); err != nil {
		return
	}
	lte, err = parseWhen("--created-before", c.String("created-before"), now)
	return
}

func yesFlag() cli.Flag {
	return &cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do it without asking (needed without a terminal)"}
}

// stdin is where a confirmation is read (a variable for tests).
var stdin = os.Stdin

// confirmed asks a person at a terminal before a command destroys or
// rewrites something. Without a terminal there is nobody to ask: the
// command needs --yes, one rule for every such command, so that a script
// never destroys by accident. A refusal is a usage error: nothing was done.
func confirmed(c *cli.Context, format string, args ...any) error {
	if c.Bool("yes") {
		return nil
	}
	if err := needsYes(c); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, format+" [y/N] ", args...)
	answer, _ := bufio.NewReader(stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return usageError("nothing done (give --yes to skip this question)")
}

// needsYes is the refusal of a command that destroys or rewrites when
// there is no terminal to ask on and no --yes.
func needsYes(c *cli.Context) error {
	if c.Bool("yes") || isTerminal(stdin) {
		return nil
	}
	return usageFor(c, "nothing done: this destroys or rewrites, and without a terminal to ask on it needs --yes")
}
