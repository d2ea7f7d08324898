package main

// Stubs, each replaced by its own file: mount.go, run.go, prompt.go.

import "github.com/urfave/cli/v2"

func todo(name string) *cli.Command {
	return &cli.Command{Name: name, Action: func(*cli.Context) error { return usageError("%s: not implemented yet", name) }}
}

func mountCommand() *cli.Command { return todo("mount") }
func runCommand() *cli.Command   { return todo("run") }

// promptCommand is "session prompt ID", registered by session.go.
func promptCommand() *cli.Command { return todo("prompt") }
