package main

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/versions"
)

// Set by the scripts that build memfs (-ldflags "$(scripts/ldflags)");
// otherwise read from the build information Go records.
var (
	version = ""
	commit  = ""
)

// buildVersion is the version, the commit (with "+dirty" when built from a
// modified tree) and the Go version of this binary.
func buildVersion() (ver, rev, goVersion string) {
	ver, rev, goVersion = version, commit, runtime.Version()
	info, ok := debug.ReadBuildInfo()
	if ok {
		if ver == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			ver = info.Main.Version
		}
		var dirty bool
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if rev == "" {
					rev = s.Value
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && rev != "" && commit == "" {
			rev += "+dirty"
		}
	}
	if ver == "" {
		ver = "devel"
	}
	if rev == "" {
		rev = "unknown"
	}
	return ver, rev, goVersion
}

func printVersion(c *cli.Context) {
	ver, rev, gover := buildVersion()
	fmt.Fprintf(c.App.Writer, "memfs %s\ncommit: %s\ngo:     %s\nsqlite: %s\n", ver, rev, gover, versions.SQLiteVersion())
}

// urfave/cli appends "(default: …)" to every flag's usage, also for false,
// 0 and -1, and where the usage already says what the default is.
var cliFlagStringer = cli.FlagStringer

var defaultSuffix = regexp.MustCompile(` \(default: [^()]*\)$`)

func flagString(f cli.Flag) string {
	s := cliFlagStringer(f)
	m := defaultSuffix.FindString(s)
	if m == "" {
		return s
	}
	rest := strings.TrimSuffix(s, m)
	switch v := strings.TrimSuffix(strings.TrimPrefix(m, " (default: "), ")"); {
	case v == "false", v == "0", v == "-1", v == `""`, strings.Contains(rest, "(default"), strings.Contains(rest, "default:"):
		return rest
	}
	return s
}

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "bash:  source <(memfs completion bash)   (or save it in /etc/bash_completion.d/memfs)\n" +
			"zsh:   source <(memfs completion zsh)\n" +
			"fish:  memfs completion fish > ~/.config/fish/completions/memfs.fish",
		Action: func(c *cli.Context) error {
			if err := wantArgs(c, 1, "SHELL"); err != nil {
				return err
			}
			switch sh := c.Args().First(); sh {
			case "bash":
				return writeBashCompletion(c.App.Writer, c.App, false)
			case "zsh":
				return writeBashCompletion(c.App.Writer, c.App, true)
			case "fish":
				return writeFishCompletion(c.App.Writer, c.App)
			default:
				return usageFor(c, "no completion for %q: give bash, zsh or fish", sh)
			}
		},
	}
}

// commandPaths lists every command path ("store", "store create") with the
// words that may follow it: subcommands and flags.
func commandPaths(app *cli.App) map[string][]string {
	paths := map[string][]string{}
	var walk func(prefix string, cmds []*cli.Command, flags []cli.Flag)
	walk = func(prefix string, cmds []*cli.Command, flags []cli.Flag) {
		var words []string
		for _, c := range cmds {
			if c.Hidden || c.Name == "help" {
				continue
			}
			words = append(words, c.Name)
		}
		for _, f := range flags {
			for _, n := range f.Names() {
				if len(n) == 1 {
					words = append(words, "-"+n)
				} else {
					words = append(words, "--"+n)
				}
			}
		}
		if !slices.Contains(words, "--help") {
			words = append(words, "--help") // urfave/cli adds it to commands once they run
		}
		paths[prefix] = words
		for _, c := range cmds {
			if c.Hidden || c.Name == "help" {
				continue
			}
			walk(strings.TrimSpace(prefix+" "+c.Name), c.Subcommands, c.Flags)
		}
	}
	walk("", app.Commands, app.Flags)
	return paths
}

// commandsWhere lists, sorted, the paths of the visible commands whose
// argument usage match accepts.
func commandsWhere(app *cli.App, match func(usage string) bool) []string {
	var out []string
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := strings.TrimSpace(prefix + " " + c.Name)
			if match(c.ArgsUsage) {
				out = append(out, p)
			}
			walk(p, c.Subcommands)
		}
	}
	walk("", app.Commands)
	slices.Sort(out)
	return out
}

// storeCommands lists the command paths whose first argument is a STORE:
// completion offers the database's store names there.
func storeCommands(app *cli.App) []string {
	return commandsWhere(app, func(usage string) bool { return strings.HasPrefix(usage, "STORE") })
}

// pathCommands lists the command paths whose second argument names a
// memory by its path (a PATH, MEMORY or VERSION after the STORE):
// completion offers the store's paths there.
func pathCommands(app *cli.App) []string {
	return commandsWhere(app, func(usage string) bool {
		rest, ok := strings.CutPrefix(usage, "STORE")
		return ok && (strings.Contains(rest, "PATH") || strings.Contains(rest, "MEMORY") || strings.Contains(rest, "VERSION"))
	})
}

// storeNamesCommand prints the names of the live stores, one a line, for
// the completion scripts; it prints nothing where there is no database.
func storeNamesCommand() *cli.Command {
	return &cli.Command{
		Name:   "__store-names",
		Hidden: true,
		Action: func(c *cli.Context) error {
			db, err := openDB(c)
			if err != nil {
				return nil // no database: a completion offers nothing rather than an error
			}
			defer db.Close()
			page, err := db.ListStores(ctx(c), versions.StoreListOptions{Limit: versions.MaxPageSize})
			for err == nil {
				for _, s := range page.Data {
					fmt.Fprintln(c.App.Writer, s.Name)
				}
				if page.NextPage == nil {
					break
				}
				page, err = db.ListStores(ctx(c), versions.StoreListOptions{Limit: versions.MaxPageSize, Page: *page.NextPage})
			}
			return nil
		},
	}
}

// memoryPathsCommand prints the paths of a store's memories that begin
// with a prefix, a directory's as DIR/ once, one a line, as a shell
// completes a file name a level at a time; it prints nothing where there
// is no database or no such store. A prefix without its leading / is
// read with it (todo → /todo.md).
func memoryPathsCommand() *cli.Command {
	return &cli.Command{
		Name:   "__memory-paths",
		Hidden: true,
		Action: func(c *cli.Context) error {
			db, err := openDB(c)
			if err != nil {
				return nil // no database: a completion offers nothing rather than an error
			}
			defer db.Close()
			s, err := db.ResolveStore(ctx(c), c.Args().Get(0))
			if err != nil {
				return nil
			}
			prefix := c.Args().Get(1)
			if !strings.HasPrefix(prefix, "/") {
				prefix = "/" + prefix
			}
			o := versions.MemoryListOptions{PathPrefix: prefix[:strings.LastIndexByte(prefix, '/')+1], Depth: 1, Limit: versions.MaxPageSize}
			for pages := 0; pages < 10; pages++ {
				page, err := db.ListMemories(ctx(c), s.ID, o)
				if err != nil {
					return nil
				}
				for _, it := range page.Data {
					p := it.Prefix
					if it.Memory != nil {
						p = it.Memory.Path
					}
					if strings.HasPrefix(p, prefix) {
						fmt.Fprintln(c.App.Writer, p)
					}
				}
				if page.NextPage == nil {
					break
				}
				o.Page = *page.NextPage
			}
			return nil
		},
	}
}

func writeBashCompletion(w io.Writer, app *cli.App, zsh bool) error {
	paths := commandPaths(app)
	keys := slices.Sorted(maps.Keys(paths))
	var b strings.Builder
	b.WriteString("# memfs completion for bash" + map[bool]string{true: " and zsh (through bashcompinit)", false: ""}[zsh] + "\n")
	if zsh {
		b.WriteString("(( $+functions[compdef] )) || { autoload -U +X compinit && compinit; }\nautoload -U +X bashcompinit && bashcompinit\n")
	}
	b.WriteString(`_memfs() {
	# zsh (through bashcompinit) numbers arrays from 1; bash from 0.
	[ -n "${ZSH_VERSION:-}" ] && setopt localoptions ksharrays
	local cur=${COMP_WORDS[COMP_CWORD]} path="" w i db="" args=0 store=
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case "$w" in
		--db) db=${COMP_WORDS[i+1]}; i=$((i + 1)); continue ;;
		--db=*) db=${w#--db=}; continue ;;
		-*) continue ;;
		esac
		if [ "$args" = 0 ] && _memfs_words "${path:+$path }$w" >/dev/null; then path="${path:+$path }$w"; else
			# The store as the shell will pass it, its quoting undone
			# by hand: what was typed is never evaluated.
			if [ "$args" = 0 ]; then
				case "$w" in
				\"*\" | \'*\') store=${w:1:${#w}-2} ;;
				*) store=${w//\\/} ;;
				esac
			fi
			args=$((args + 1))
		fi
	done
	if [[ "$cur" == -* || -z "$path" ]] || _memfs_has_sub "$path"; then
		COMPREPLY=($(compgen -W "$(_memfs_words "$path")" -- "$cur"))
	elif [ "$args" = 1 ] && _memfs_takes_path "$path"; then
		# A memory's path, from the store named before it; never the
		# host's files, which mean nothing to the store.
		type compopt >/dev/null 2>&1 && compopt +o default 2>/dev/null
		local paths p IFS
		paths=$(memfs ${db:+--db "$db"} __memory-paths "$store" "$cur" 2>/dev/null)
		IFS=$'\n'
		COMPREPLY=($(while IFS= read -r p; do [ -n "$p" ] && printf '%q\n' "$p"; done <<<"$paths"))
		if [[ ${#COMPREPLY[@]} = 1 && "${COMPREPLY[0]}" == */ ]]; then
			type compopt >/dev/null 2>&1 && compopt -o nospace 2>/dev/null
		fi
	elif [ "$args" = 0 ] && _memfs_takes_store "$path"; then
		# Store names hold spaces: one candidate a line, quoted for the shell.
		local names n IFS
		names=$(memfs ${db:+--db "$db"} __store-names 2>/dev/null)
		IFS=$'\n'
		COMPREPLY=($(while IFS= read -r n; do
			[[ -n "$n" && "$n" == "$cur"* ]] && printf '%q\n' "$n"
		done <<<"$names"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
_memfs_takes_store() {
	case "$1" in
` + storeCases(app) + `		*) return 1 ;;
	esac
}
_memfs_takes_path() {
	case "$1" in
` + pathCases(app) + `		*) return 1 ;;
	esac
}
_memfs_has_sub() {
	local x
	for x in $(_memfs_words "$1"); do case "$x" in -*) ;; *) return 0 ;; esac; done
	return 1
}
_memfs_words() {
	case "$1" in
`)
	for _, k := range keys {
		fmt.Fprintf(&b, "\t\t%q) echo %q ;;\n", k, strings.Join(paths[k], " "))
	}
	b.WriteString("\t\t*) return 1 ;;\n\tesac\n}\ncomplete -o default -F _memfs memfs\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFishCompletion(w io.Writer, app *cli.App) error {
	paths := commandPaths(app)
	keys := slices.Sorted(maps.Keys(paths))
	var b strings.Builder
	b.WriteString("# memfs completion for fish\n")
	b.WriteString(`function __memfs_path
	set -l words (commandline -opc)
	set -e words[1]
	set -l path
	for w in $words
		string match -q -- '-*' $w; and continue
		contains -- (string join ' ' $path $w) $__memfs_paths; and set path $path $w
	end
	string join ' ' $path
end
function __memfs_at
	set -l p (__memfs_path)
	test "$p" = "$argv[1]"
end
function __memfs_args
	set -l words (commandline -opc)
	set -e words[1]
	set -l path
	set -l args
	for w in $words
		string match -q -- '-*' $w; and continue
		if test (count $args) -eq 0; and contains -- (string join ' ' $path $w) $__memfs_paths
			set path $path $w
		else
			set args $args $w
		end
	end
	printf '%s\n' $args
end
function __memfs_memory_paths
	set -l args (__memfs_args)
	test (count $args) -eq 1; or return
	memfs __memory-paths $args[1] (commandline -ct) 2>/dev/null
end
`)
	b.WriteString("set -g __memfs_paths")
	for _, k := range keys {
		if k != "" {
			fmt.Fprintf(&b, " %q", k)
		}
	}
	b.WriteString("\ncomplete -c memfs -f\n")
	for _, k := range storeCommands(app) {
		fmt.Fprintf(&b, "complete -c memfs -n '__memfs_at %q; and test (count (__memfs_args)) -eq 0' -a '(memfs __store-names 2>/dev/null)'\n", k)
	}
	for _, k := range pathCommands(app) {
		fmt.Fprintf(&b, "complete -c memfs -n '__memfs_at %q' -a '(__memfs_memory_paths)'\n", k)
	}
	for _, k := range keys {
		var subs, flags []string
		for _, word := range paths[k] {
			if strings.HasPrefix(word, "--") {
				flags = append(flags, "-l "+strings.TrimPrefix(word, "--"))
			} else if strings.HasPrefix(word, "-") {
				flags = append(flags, "-s "+strings.TrimPrefix(word, "-"))
			} else {
				subs = append(subs, word)
			}
		}
		cond := fmt.Sprintf("__memfs_at %q", k)
		if len(subs) > 0 {
			fmt.Fprintf(&b, "complete -c memfs -n '%s' -a %q\n", cond, strings.Join(subs, " "))
		}
		for _, f := range flags {
			fmt.Fprintf(&b, "complete -c memfs -n '%s' %s\n", cond, f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// storeCases is the case arms of _memfs_takes_store.
func storeCases(app *cli.App) string { return caseArms(storeCommands(app)) }

// pathCases is the case arms of _memfs_takes_path.
func pathCases(app *cli.App) string { return caseArms(pathCommands(app)) }

func caseArms(paths []string) string {
	var b strings.Builder
	for _, k := range paths {
		fmt.Fprintf(&b, "\t%q) return 0 ;;\n", k)
	}
	return b.String()
}
