package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// writerMain is one process of the save storm: it saves payloads into dir
// until SIGTERM, and appends every save whose close() returned success to
// the acknowledgement log (fsynced, outside the mount), so the checker
// knows which saves the filesystem promised to keep.
func writerMain(args []string) int {
	fs := flag.NewFlagSet("crashcmd writer", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory inside the mount to save into")
	ackPath := fs.String("ack", "", "acknowledgement log, outside the mount")
	writer := fs.Int("id", 0, "writer number")
	cycle := fs.Int("cycle", 0, "cycle number")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" || *ackPath == "" {
		fmt.Fprintln(os.Stderr, "crashcmd writer: -dir and -ack are required")
		return 2
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)

	ack, err := os.OpenFile(*ackPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "crashcmd writer: open acknowledgement log: %v\n", err)
		return 1
	}
	defer ack.Close()

	var acked, failed int
	for seq := 1; ; seq++ {
		select {
		case <-stop:
			fmt.Printf("%d %d\n", acked, failed)
			return 0
		default:
		}
		id := saveID{Writer: *writer, Cycle: *cycle, Seq: seq}
		content := payload(id)
		if err := saveOnce(*dir, id, content); err != nil {
			failed++
			// The daemon is gone (ENOTCONN) or the directory is not there
			// yet: do not spin on a dead mount.
			time.Sleep(5 * time.Millisecond)
			continue
		}
		_, err := fmt.Fprintf(ack, "%s %s\n", id, sha256Hex(content))
		if err == nil {
			err = ack.Sync()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "crashcmd writer: acknowledgement log %s: %v\n", *ackPath, err)
			return exitAckLog
		}
		acked++
	}
}

// fileOf is the file a writer's save number seq goes to.
func fileOf(seq int) int { return seq % 8 }

// exitAckLog is a writer's exit status when its acknowledgement log failed.
const exitAckLog = 3

// saveOnce saves content the two ways agents do: every fourth save writes a
// temporary file and renames it over the target (editors, sed -i), the
// others truncate and rewrite the target in place. Content goes out in
// several write() calls, so a save torn between them would show.
func saveOnce(dir string, id saveID, content string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	target := filepath.Join(dir, fmt.Sprintf("f%d.txt", fileOf(id.Seq)))
	if id.Seq%4 != 0 {
		return writeFile(target, content)
	}
	tmp := filepath.Join(dir, ".tmp")
	if err := writeFile(tmp, content); err != nil {
		return err
	}
	return os.Rename(tmp, target)
}

func writeFile(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	third := len(content) / 3
	chunks := []string{content[:third], content[third : 2*third], content[2*third:]}
	var werr error
	for _, c := range chunks {
		if _, werr = f.WriteString(c); werr != nil {
			break
		}
	}
	cerr := f.Close()
	return errors.Join(werr, cerr)
}
