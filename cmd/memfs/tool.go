package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
)

func toolCommand() *cli.Command {
	return &cli.Command{
		Name:  "tool",
		Usage: "run memory tool (memory_20250818) commands on a store: one JSON command per line on stdin, one tool_result per line on stdout",
		Description: `Each input line is the input of a memory tool_use block, e.g.
   {"command":"view","path":"/memories"}
and each output line the matching result:
   {"type":"tool_result","content":"…","is_error":false}
/memories is the store's root. Writes are versions attributed to the OS user,
or to the session named by --session (which must have the store attached; a
read_only attachment refuses every change, and one with a write prefix every
change outside it). A command that fails is a result with is_error true, not a
failure of memfs tool, which exits 0 at the end of its input, or 6 when a
change was refused as read-only to the session.`,
		ArgsUsage: "STORE",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "session", Usage: "act for session `ID`: its writes, its access to the store"},
		},
		Action: toolRun,
	}
}

func toolRun(c *cli.Context) error {
	if err := wantArgs(c, 1, "STORE"); err != nil {
		return err
	}
	return withStore(c, func(ctx context.Context, db *versions.DB, s *versions.Store) error {
		tool := memtool.New(db, s.ID, cliActor())
		if id := c.String("session"); id != "" {
			sess, err := resolveSession(ctx, db, id)
			if err != nil {
				return err
			}
			if tool, err = memtool.ForSession(ctx, db, s.ID, sess.ID); err != nil {
				return err
			}
		}
		return serveLines(ctx, tool, os.Stdin, c.App.Writer, toolLineLimit(s))
	})
}

// toolLineSlack is what a command line may hold beyond the store's memory
// limit: the JSON around the content and its escapes.
const toolLineSlack = 1 << 20

// toolLineLimit is the longest input line memfs tool reads for store s.
func toolLineLimit(s *versions.Store) int { return s.MaxMemoryBytes + toolLineSlack }

// serveLines answers each non-empty line of in with one line on out,
// flushed at once so that a harness can wait for each answer. A line
// longer than max is answered with an error and skipped without being
// held: reading it stops at max bytes and the rest is discarded as it
// arrives.
func serveLines(ctx context.Context, tool *memtool.Tool, in io.Reader, out io.Writer, max int) error {
	r := bufio.NewReader(in)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	refused := 0
	for {
		line, over, err := readLine(r, max)
		if over || len(bytes.TrimSpace(line)) > 0 {
			res := memtool.Result{Content: fmt.Sprintf("Error: The command is over the limit of %d bytes per line (the store's memory limit and %d bytes for the JSON around it): send a smaller command, or split the content over several commands", max, toolLineSlack), IsError: true}
			if !over {
				res = tool.RunJSON(ctx, line)
			}
			if res.ReadOnly {
				refused++
			}
			if err := enc.Encode(res); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			if refused > 0 {
				// Every result was written; the exit status tells a
				// script what a read-only refusal means everywhere.
				return &versions.Error{Code: versions.CodeReadOnly, Message: fmt.Sprintf(
					"%d of the commands would have changed what the session may not write (see their results); nothing of them was changed", refused)}
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads up to and including the next newline. When the line is
// longer than max it returns over, having read the whole line but kept at
// most max bytes of it.
func readLine(r *bufio.Reader, max int) (line []byte, over bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !over {
			if len(line)+len(chunk) > max {
				over, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err != bufio.ErrBufferFull {
			return line, over, err
		}
	}
}
