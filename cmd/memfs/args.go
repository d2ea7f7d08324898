package main

import (
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed lets flags follow positional arguments, as the contract writes
// them ("memory create STORE --path P --content X"): urfave/cli stops parsing
// flags at the first positional argument, so the arguments of the command
// being run are reordered, flags first. Global flags (--db, --format) given
// after a command are moved to the front, before the command's name.
// Everything after "--" is left as it is.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	global := flagArity(app.Flags)
	var globals, path []string
	rest := args[1:]
	cmds := app.Commands
	// The command path: global flags, then command names down to the leaf.
	var leaf *cli.Command
	for len(rest) > 0 {
		a := rest[0]
		if a == "--" {
			break
		}
		if isFlag(a) {
			// --help stays with the command group it follows.
			n := flagLen(a, rest, global)
			if name := flagName(a); leaf == nil || name != "help" && name != "h" {
				globals = append(globals, rest[:n]...)
			} else {
				path = append(path, rest[:n]...)
			}
			rest = rest[n:]
			continue
		}
		next := findCommand(cmds, a)
		if next == nil {
			break
		}
		leaf = next
		path = append(path, a)
		rest = rest[1:]
		cmds = next.Subcommands
		if len(cmds) == 0 {
			break
		}
	}
	if leaf == nil || leaf.SkipFlagParsing {
		return args
	}
	own := flagArity(leaf.Flags)
	var flags, positional []string
	dangling := "" // a flag that takes a value, given last without one
	help := false
	for len(rest) > 0 {
		a := rest[0]
		if a == "--" {
			positional = append(positional, rest...)
			break
		}
		if !isFlag(a) && commandLine[leaf.Name] {
			positional = append(positional, rest...)
			break
		}
		if !isFlag(a) {
			positional = append(positional, a)
			rest = rest[1:]
			continue
		}
		if n, ok := gitCount(leaf, a); ok {
			flags = append(flags, "-n", n)
			rest = rest[1:]
			continue
		}
		name := flagName(a)
		help = help || name == "help" || name == "h"
		if _, ok := own[name]; !ok {
			if _, ok := global[name]; ok {
				n := flagLen(a, rest, global)
				globals = append(globals, rest[:n]...)
				rest = rest[n:]
				continue
			}
		}
		n := flagLen(a, rest, own)
		if len(rest) == 1 && own[name] && !strings.Contains(a, "=") {
			dangling = a
		}
		flags = append(flags, rest[:n]...)
		rest = rest[n:]
	}
	out := append([]string{args[0]}, globals...)
	out = append(out, path...)
	out = append(out, flags...)
	if help || dangling != "" {
		// urfave/cli would read the arguments as a help topic, or a
		// positional argument as the dangling flag's value ("log Notes
		// -n" is "-n needs a value", not an invalid value "Notes").
		return out
	}
	if len(positional) > 0 && positional[0] != "--" && hasDashPrefix(positional) {
		// A positional argument that starts with "-" would be read as a
		// flag once flags precede it: keep it after a "--".
		out = append(out, "--")
	}
	return append(out, positional...)
}

// commandLine names the commands whose arguments are a command line to run
// ("run --store S CMD ARG..."): the first argument ends their flags, as if
// "--" preceded it, so the command's own flags reach it untouched.
var commandLine = map[string]bool{"run": true}

func hasDashPrefix(positional []string) bool {
	for _, p := range positional {
		if p == "--" {
			return false
		}
		if strings.HasPrefix(p, "-") {
			return true
		}
	}
	return false
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// isFlag reports whether a looks like a flag; a lone "-" is an argument
// (stdin).
func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' }

func flagName(a string) string {
	name := strings.TrimLeft(a, "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	return name
}

// flagLen is how many arguments the flag at rest[0] spans: 2 when it takes a
// value given as the next argument, else 1.
func flagLen(a string, rest []string, arity map[string]bool) int {
	if strings.Contains(a, "=") || len(rest) < 2 {
		return 1
	}
	if arity[flagName(a)] {
		return 2
	}
	return 1
}

// flagArity maps every name of every flag to whether it takes a value.
func flagArity(flags []cli.Flag) map[string]bool {
	m := map[string]bool{"help": false, "h": false}
	for _, f := range flags {
		takes := true
		if d, ok := f.(cli.DocGenerationFlag); ok {
			takes = d.TakesValue()
		}
		for _, n := range f.Names() {
			m[n] = takes
		}
	}
	return m
}

var countForm = regexp.MustCompile(`^-(?:n|-max-count=)?([0-9]+)$`)

// gitCount reads git log's spellings of a count, -n1, -1 and
// --max-count=1, for a command with an -n count flag (urfave/cli takes
// only "-n 1" and "-n=1").
func gitCount(leaf *cli.Command, a string) (string, bool) {
	m := countForm.FindStringSubmatch(a)
	if m == nil {
		return "", false
	}
	for _, f := range leaf.Flags {
		if n, ok := f.(*cli.IntFlag); ok && n.Name == "n" {
			return m[1], true
		}
	}
	return "", false
}
