// Command memfs manages memory stores and mounts them for agents.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/httpapi"
	"github.com/memfs/memfs/versions"
)

// Exit codes (the command-line contract).
const (
	exitOK       = 0
	exitInternal = 1
	exitUsage    = 2
	exitNotFound = 3
	exitConflict = 4
	exitInvalid  = 5
	exitReadOnly = 6
	// exitUnreachable: the PostgreSQL server could not be reached or the
	// connection dropped; the same command may succeed once it is back.
	exitUnreachable = 7
)

func main() {
	slog.SetDefault(slog.New(newRateHandler(slog.NewTextHandler(logOutput(), &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: logSafe}))))
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		// No panic reaches a user as a stack dump: log it for a bug report
		// and exit as an internal error.
		if p := recover(); p != nil {
			slog.Error("internal error", "panic", p, "stack", string(debug.Stack()))
			code = reportError(fmt.Errorf("internal error: %v; please report it with the log above", p), jsonRequested(args), stderr)
		}
	}()
	app := newApp(stdout, stderr)
	err := app.Run(interspersed(app, args))
	if err == nil {
		return exitOK
	}
	return reportError(err, jsonRequested(args), stderr)
}

func init() {
	cli.VersionPrinter = printVersion
	cli.FlagStringer = flagString
}

func newApp(stdout, stderr io.Writer) *cli.App {
	ver, _, _ := buildVersion()
	app := &cli.App{
		Name:      "memfs",
		Version:   ver,
		Usage:     "versioned memory stores for AI agents, mounted as plain files",
		Writer:    stdout,
		ErrWriter: stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "db", Usage: "the database: a SQLite file, or a postgres:// URL", EnvVars: []string{"MEMFS_DB"}, DefaultText: "$XDG_DATA_HOME/memfs/memfs.db"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output format: text or json"},
		},
		Before: func(c *cli.Context) error {
			if f := c.String("format"); f != "text" && f != "json" {
				return usageError("--format must be text or json, not %q (see memfs --help)", f)
			}
			return nil
		},
		ExitErrHandler:  func(*cli.Context, error) {}, // run reports errors and picks the exit code
		OnUsageError:    onUsageError,
		HideHelpCommand: true,
		Commands: []*cli.Command{
			storeCommand(),
			memoryCommand(),
			versionCommand(),
			restoreCommand(),
			checkpointCommand(),
			undoCommand(),
			logCommand(),
			diffCommand(),
			exportCommand(),
			importCommand(),
			sessionCommand(),
			mountCommand(),
			runCommand(),
			toolCommand(),
			completionCommand(),
			serveCommand(),
			apikeyCommand(),
			scanCommand(),
			searchCommand(),
			lintCommand(),
			storeNamesCommand(),
			memoryPathsCommand(),
			pendingCommand(),
		},
		// Values of repeated flags (--metadata k=v, --store S) may hold commas.
		DisableSliceFlagSeparator: true,
		Action:                    needSubcommand,
	}
	for _, c := range app.Commands {
		strictUsage(c)
	}
	return app
}

// strictUsage makes every command report flag mistakes as usage errors
// (exit 2) and reject unknown subcommands, instead of urfave/cli's default of
// printing help and exiting 1 or 3.
func strictUsage(c *cli.Command) {
	if c.OnUsageError == nil {
		c.OnUsageError = onUsageError
	}
	if len(c.Subcommands) > 0 && c.Action == nil {
		c.Action = needSubcommand
	}
	for _, s := range c.Subcommands {
		strictUsage(s)
	}
}

// needSubcommand is the action of a command that only groups others.
func needSubcommand(c *cli.Context) error {
	if c.Args().First() == "help" {
		// The app hides its help command; "memfs help [COMMAND]" still works.
		if topics := c.Args().Slice()[1:]; len(topics) > 0 {
			cmds := c.App.Commands
			for _, topic := range topics {
				cmd := findCommand(cmds, topic)
				if cmd == nil {
					return usageFor(c, "no help for unknown command %q", strings.Join(topics, " "))
				}
				cmds = cmd.Subcommands
			}
			// As "memfs TOPIC... --help": urfave/cli lists a group's
			// commands only once it has run the group.
			return c.App.RunContext(c.Context, append(append([]string{c.App.Name}, topics...), "--help"))
		}
		return cli.ShowAppHelp(c)
	}
	if c.Args().Present() {
		return usageFor(c, "unknown command %q", c.Args().First())
	}
	// A mistake: the help goes to stderr with the error, so that stdout
	// holds nothing a script would read as the command's output.
	defer func(out io.Writer) { c.App.Writer = out }(c.App.Writer)
	c.App.Writer = c.App.ErrWriter
	if c.Command != nil && len(c.Command.Subcommands) > 0 {
		_ = cli.ShowSubcommandHelp(c)
	} else {
		_ = cli.ShowAppHelp(c)
	}
	return usageFor(c, "needs a command")
}

// usage is a command-line mistake: exit code 2.
type usage struct{ msg string }

func (u *usage) Error() string { return u.msg }

func usageError(format string, args ...any) error {
	return &usage{fmt.Sprintf(format, args...)}
}

func onUsageError(c *cli.Context, err error, _ bool) error {
	return usageFor(c, "%s", flagWords(err.Error()))
}

// goFlagName is a flag as Go's flag package names it in its errors: with
// one dash, also for a long name.
var goFlagName = regexp.MustCompile(`(flag provided but not defined: |for flag |for |flag needs an argument: )-([A-Za-z0-9][A-Za-z0-9-]+)`)

// flagWords turns the flag package's wording into the command line's:
// "unknown flag --verbose", not "flag provided but not defined: -verbose".
func flagWords(msg string) string {
	msg = goFlagName.ReplaceAllString(msg, "$1--$2")
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return "unknown flag " + name
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return name + " needs a value"
	}
	return strings.TrimSuffix(msg, ": parse error")
}

// usageFor is a usage error of the command being run: the message names the
// command and where its help is.
func usageFor(c *cli.Context, format string, args ...any) error {
	full := c.App.Name
	if c.Command != nil && c.Command.HelpName != "" {
		full = c.Command.HelpName
	}
	msg := fmt.Sprintf(format, args...)
	if sub := strings.TrimPrefix(full, c.App.Name+" "); sub != full {
		msg = sub + ": " + msg
	}
	return usageError("%s (see %s --help)", msg, full)
}

// exitCode maps an error to the contract's exit codes.
func exitCode(err error) int {
	var u *usage
	if errors.As(err, &u) {
		return exitUsage
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	switch versions.ErrorCode(err) {
	case versions.CodeNotFound:
		return exitNotFound
	case versions.CodePathConflict, versions.CodePreconditionFailed, versions.CodeConflict,
		versions.CodeNotEmpty, versions.CodeIsDir, versions.CodeNotDir, versions.CodeStale:
		return exitConflict
	case versions.CodeInvalid, versions.CodeStoreFull, versions.CodeTooLarge,
		versions.CodeNameTooLong, versions.CodeNotUTF8, versions.CodeOverQuota, versions.CodeCredential:
		return exitInvalid
	case versions.CodeReadOnly:
		return exitReadOnly
	case versions.CodeUnavailable:
		return exitUnreachable
	}
	return exitInternal
}

// reportError prints err on stderr, as the API's error envelope with --format
// json, and returns the exit code.
func reportError(err error, asJSON bool, stderr io.Writer) int {
	code := exitCode(err)
	var ec cli.ExitCoder
	if errors.As(err, &ec) && err.Error() == "" {
		return code // a status passed through, e.g. run's command's
	}
	msg := err.Error() + cliHint(err)
	if !asJSON {
		fmt.Fprintf(stderr, "memfs: %s\n", msg)
		return code
	}
	body := map[string]string{"type": httpapi.TypeInvalidRequest, "message": msg}
	switch code {
	case exitInternal:
		body["type"] = httpapi.TypeAPI
	case exitUsage:
	default:
		var e *versions.Error
		if errors.As(err, &e) {
			body["type"] = httpapi.ErrorType(e.Code)
			if e.Code == versions.CodePathConflict {
				body["conflicting_memory_id"] = e.ConflictingMemoryID
				body["conflicting_path"] = e.ConflictingPath
			}
		}
	}
	out, _ := json.Marshal(struct {
		Type  string            `json:"type"`
		Error map[string]string `json:"error"`
	}{"error", body})
	fmt.Fprintf(stderr, "%s\n", out)
	return code
}

// cliHint names the command that lists what an engine error is about.
func cliHint(err error) string {
	var e *versions.Error
	if !errors.As(err, &e) {
		return ""
	}
	store := e.StoreID
	if store == "" {
		store = "STORE"
	}
	switch {
	case e.Object == versions.ObjectStore && (e.Code == versions.CodeNotFound || e.Code == versions.CodeInvalid):
		return "; list stores with `memfs store list --include-archived`"
	case e.Object == versions.ObjectMemory && e.Code == versions.CodeNotFound:
		return fmt.Sprintf("; list its memories with `memfs memory list %s`, past paths with `memfs log %s`", store, store)
	case e.Object == versions.ObjectVersion && e.Code == versions.CodeNotFound:
		return fmt.Sprintf("; list them with `memfs version list %s`", store)
	case e.Object == versions.ObjectVersion:
		return fmt.Sprintf(" (see `memfs log %s`)", store)
	case e.Object == versions.ObjectSession && e.Code == versions.CodeNotFound:
		return "; list sessions with `memfs session list`"
	case e.Object == versions.ObjectSession:
		return "; start one with --store, or with `memfs session create`"
	}
	return ""
}

// jsonRequested reports whether --format json was given, for errors raised
// before or while flags are parsed.
func jsonRequested(args []string) bool {
	for i, a := range args {
		if a == "--format=json" || a == "-format=json" || (a == "--format" || a == "-format") && i+1 < len(args) && args[i+1] == "json" {
			return true
		}
		if a == "--" {
			break
		}
	}
	return false
}

// openDB opens the database named by --db, MEMFS_DB or the default path.
// The caller closes it.
func openDB(c *cli.Context) (*versions.DB, error) {
	path, err := dbPath(c)
	if err != nil {
		return nil, err
	}
	db, err := versions.Open(path, versions.Options{})
	if err != nil {
		return nil, err
	}
	db.SetGuardObserver(logGuard)
	// A file saved through a mount is the store's from its close(): no
	// waiting (a temporary name's pending file is not, by design).
	return db, nil
}

// dbPath is the database --db, MEMFS_DB or the default names. Only the
// commands in createsDB make a database where there is none; every other
// one refuses a SQLite file that does not exist, rather than leave an
// empty database at a mistyped path.
func dbPath(c *cli.Context) (string, error) {
	path := c.String("db")
	if path == "" {
		var err error
		if path, err = versions.DefaultPath(); err != nil {
			return "", err
		}
	}
	if c.Command == nil || createsDB[commandName(c)] || versions.IsPostgres(path) {
		return path, nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return "", noDatabase(path)
	}
	return path, nil
}

func noDatabase(path string) error {
	return &versions.Error{Code: versions.CodeNotFound, Message: fmt.Sprintf(
		"no memfs database at %s: create one with `memfs --db %s store create --name NAME` (or `memfs import`, `memfs apikey create`), or check --db or MEMFS_DB", path, path)}
}

// commandName is the command being run without the program's name, e.g.
// "store create".
func commandName(c *cli.Context) string {
	return strings.TrimPrefix(c.Command.HelpName, c.App.Name+" ")
}

// createsDB names the commands that make a database where there is none:
// the ones that put something in it a later command needs. import makes
// one only if it succeeds.
var createsDB = map[string]bool{"store create": true, "import": true, "apikey create": true}

// cliActor is the actor of writes made through the CLI: the OS user.
func cliActor() versions.Actor {
	if u, err := user.Current(); err == nil {
		return versions.UserActor(u.Username)
	}
	return versions.UserActor(fmt.Sprint(os.Getuid()))
}

// asJSON reports whether --format json was given.
func asJSON(c *cli.Context) bool { return c.String("format") == "json" }

// emit prints v as JSON with --format json, otherwise calls text.
func emit(c *cli.Context, v any, text func(w io.Writer)) error {
	w := c.App.Writer
	if asJSON(c) {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	}
	text(w)
	return nil
}

// ctx is the context of a command: cancelled by nothing yet, one place to
// change that.
func ctx(c *cli.Context) context.Context { return c.Context }
