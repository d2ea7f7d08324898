package main

import (
	"context"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/versions"
)

// promptCommand is "session prompt ID", registered by session.go.
func promptCommand() *cli.Command {
	return &cli.Command{
		Name:      "prompt",
		Usage:     "print the session's memory section for an agent's system prompt",
		ArgsUsage: "ID",
		Flags:     []cli.Flag{runMountRootFlag("show mount paths under `DIR`"), historyFlag()},
		Action:    sessionPrompt,
	}
}

func runMountRootFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "mount-root", Value: versions.MountRoot, Usage: usage}
}

// runMountRoot is the absolute, clean --mount-root.
func runMountRoot(c *cli.Context) (string, error) {
	root := c.String("mount-root")
	if root == "" {
		return "", usageFor(c, "--mount-root must name a directory")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", usageFor(c, "--mount-root %q: %v", root, err)
	}
	return abs, nil
}

// promptObject is the --format json output of session prompt.
type promptObject struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id"`
	Text      string `json:"text"`
}

func sessionPrompt(c *cli.Context) error {
	if err := wantArgs(c, 1, "ID"); err != nil {
		return err
	}
	root, err := runMountRoot(c)
	if err != nil {
		return err
	}
	return withDB(c, func(ctx context.Context, db *versions.DB) error {
		sess, err := resolveSession(ctx, db, c.Args().First())
		if err != nil {
			return err
		}
		text, err := sessionPromptText(ctx, db, sess, root, c.Bool("history"))
		if err != nil {
			return err
		}
		return emit(c, promptObject{"session_prompt", sess.ID, text}, func(w io.Writer) { fmt.Fprint(w, text) })
	})
}

// sessionPromptText renders the prompt with each store's current size
// limit; history says the mount shows the .history tree.
func sessionPromptText(ctx context.Context, db *versions.DB, sess *versions.Session, root string, history bool) (string, error) {
	limits := make([]int, len(sess.Resources))
	for i, a := range sess.Resources {
		s, err := db.GetStore(ctx, a.StoreID)
		if err != nil {
			return "", fmt.Errorf("store %s attached to session %s: %w", a.StoreID, sess.ID, err)
		}
		limits[i] = s.MaxMemoryBytes
	}
	text := renderPrompt(sess, root, limits)
	if history && len(sess.Resources) > 0 {
		text += renderHistoryPrompt(root, sess.Resources[0])
	}
	return text, nil
}

// renderPrompt writes the memory section of an agent's system prompt:
// where each store is, what the agent may do there, and what the files are.
// maxBytes[i] is the per-file limit of sess.Resources[i].
func renderPrompt(sess *versions.Session, root string, maxBytes []int) string {
	var b strings.Builder
	n := len(sess.Resources)
	b.WriteString("# Memory\n\n")
	fmt.Fprintf(&b, "You have %d persistent memory %s, mounted as %s of plain text files that outlive this session. "+
		"Read %s with ordinary file tools (ls, cat, grep) before you start, and save what you learn that should be remembered as files in a read-write store.\n\n",
		n, promptPlural(n, "store", "stores"), promptPlural(n, "a directory", "directories"), promptPlural(n, "it", "them"))
	sameLimit := true
	for _, m := range maxBytes {
		sameLimit = sameLimit && m == maxBytes[0]
	}
	for i, a := range sess.Resources {
		mode := "read-write"
		switch {
		case a.Access == versions.ReadOnly:
			mode = "read-only"
		case a.WritePrefix != "":
			mode = "read-only except " + promptStoreDir(root, a) + strings.TrimPrefix(a.WritePrefix, "/") + ", the one folder you may write in"
		}
		if !sameLimit {
			mode += fmt.Sprintf(", files up to %d bytes", maxBytes[i])
		}
		fmt.Fprintf(&b, "- %s at %s (%s).\n", promptOneLine(a.Name), promptStoreDir(root, a), mode)
		if d := strings.TrimSpace(a.Description); d != "" {
			b.WriteString("  Its description, as the store's owner wrote it:\n" + promptQuote(d))
		}
		if a.Instructions != nil && strings.TrimSpace(*a.Instructions) != "" {
			b.WriteString("  Its instructions for this session:\n" + promptQuote(strings.TrimSpace(*a.Instructions)))
		}
	}
	b.WriteString("\n")
	if sameLimit && n > 0 {
		fmt.Fprintf(&b, "Files are plain UTF-8 text of at most %d bytes each. ", maxBytes[0])
	} else {
		b.WriteString("Files are plain UTF-8 text. ")
	}
	fmt.Fprintf(&b, "Every save is kept as a version attributed to this session, so earlier content can be recovered. "+
		"Writing in a read-only store fails with EROFS (\"Read-only file system\"), and so does creating anything directly in %s/, "+
		"which is itself read-only: create files and directories only inside a store's directory.\n", strings.TrimSuffix(root, "/"))
	return b.String()
}

// renderHistoryPrompt tells the agent where earlier versions are and how to
// restore one, with the first store as the example.
func renderHistoryPrompt(root string, a versions.Attachment) string {
	root = strings.TrimSuffix(root, "/")
	store := strings.TrimSuffix(promptStoreDir(root, a), "/")
	slug := path.Base(store)
	return fmt.Sprintf("\nEarlier versions of every file, deleted files included, are readable (never writable) under %s/.history/: "+
		"%s/.history/%s/notes.md/ is a directory with one file per version saved at %s/notes.md, named TIME-OPERATION-VERSION_ID "+
		"so that ls lists them oldest first (a deletion reads empty). To undo a change, copy a version back over the file: "+
		"cp %s/.history/%s/notes.md/ENTRY %s/notes.md saves it as a new version.\n",
		root, root, slug, store, root, slug, store)
}

// promptStoreDir is where an attachment is mounted under root, with a trailing
// slash so an agent reads it as a directory.
func promptStoreDir(root string, a versions.Attachment) string {
	slug := a.Slug
	if slug == "" {
		slug = path.Base(a.MountPath)
	}
	return strings.TrimSuffix(root, "/") + "/" + slug + "/"
}

// promptQuote renders text that a store's owner or a session's creator
// wrote (a description, instructions) as a quotation inside the list item:
// every line starts with "  > ", so that nothing in it can pass as the
// prompt's own structure (a heading, a list item, another store). Line and
// paragraph separators of every kind end a line; other control and format
// characters are dropped.
func promptQuote(s string) string {
	s = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u2028", "\n", "\u2029", "\n", "\v", "\n", "\f", "\n", "\u0085", "\n").Replace(s)
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		line = strings.Map(func(r rune) rune {
			if r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
				return -1
			}
			return r
		}, line)
		b.WriteString(strings.TrimRight("  > "+line, " \t") + "\n")
	}
	return b.String()
}

// promptOneLine keeps a name on its list item's line.
func promptOneLine(s string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)), " ")
}

func promptPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
