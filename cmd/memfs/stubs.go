package main

// Stubs, each replaced by its own file: store.go, memory.go, version.go,
// history.go (restore, log, diff, export), session.go, mount.go, run.go,
// prompt.go.

import "github.com/urfave/cli/v2"

func todo(name string) *cli.Command {
	return &cli.Command{Name: name, Action: func(*cli.Context) error { return usageError("%s: not implemented yet", name) }}
}

func storeCommand() *cli.Command   { return todo("store") }
func memoryCommand() *cli.Command  { return todo("memory") }
func versionCommand() *cli.Command { return todo("version") }
func restoreCommand() *cli.Command { return todo("restore") }
func logCommand() *cli.Command     { return todo("log") }
func diffCommand() *cli.Command    { return todo("diff") }
func exportCommand() *cli.Command  { return todo("export") }
func sessionCommand() *cli.Command { return todo("session") }
func mountCommand() *cli.Command   { return todo("mount") }
func runCommand() *cli.Command     { return todo("run") }

// promptCommand is "session prompt ID", registered by session.go.
func promptCommand() *cli.Command { return todo("prompt") }
